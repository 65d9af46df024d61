"""Fixtures shared by test packages that are far apart (folders nearer to one package keep theirs in the
package's own conftest.py: tests/decode, tests/train, tests/reliability).

Tests that read the real corpora in ../shared/data use the `shared_data` fixture, which skips
cleanly when the folder is absent (a fresh clone elsewhere, a user's machine). Helpers are reached through
fixtures (factories where a test builds several things); no test imports another test module or a conftest.
"""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest
import yaml

from sumpipe.config import Budget
from sumpipe.numerics import PORTABLE

# The kernels of the project's default `train.numerics: portable`, set before any test loads torch: the
# commands the tests run in this process then find them pinned already, as a new process would.
os.environ.update(PORTABLE)

if TYPE_CHECKING:
    from sumpipe.models.length import LengthControl

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SUMPIPE_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ../shared/data, or skip the test when it is not there."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (real data is optional)")
    return SHARED_DATA


@pytest.fixture
def repo_root() -> Path:
    return REPO


# --------------------------------------------------------------------------------------------
# The `sumpipe` command line, in this process
# --------------------------------------------------------------------------------------------
class CliResult(NamedTuple):
    """How `sumpipe ARGS` ended (a tuple, so `code, out, err = cli(...)` unpacks it)."""

    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Callable[..., CliResult]:
    """`cli(*args, cwd=None, stdin=None)`: `sumpipe ARGS` through the console-script entry point
    (`sumpipe.cli.main`), in this process, in folder `cwd`, reading the bytes `stdin`.

    The entry point, not typer's `CliRunner` on `sumpipe.cli.app`: `main` is what turns a `SumpipeError` into
    the one `error:` line on stderr and exit status 1 (and a usage error into one `error: ... (see --help)`
    line, exit status 2) that the tests check; on the app alone, CliRunner gives an empty stderr and the
    exception, or click's usage panel. An exception that `main` lets escape fails the test with its
    traceback. torch's thread count is restored (a command may set its own)."""

    def run(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> CliResult:
        from sumpipe.cli import main

        if cwd is not None:
            monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "argv", ["sumpipe", *args])
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        torch = sys.modules.get("torch")
        threads = torch.get_num_threads() if torch is not None else None
        code = 0
        try:
            main()
        except SystemExit as exc:  # sys.exit(None) is status 0, sys.exit("message") status 1
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            if threads is not None:
                torch.set_num_threads(threads)
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run


# --------------------------------------------------------------------------------------------
# The tiny pipeline: the repository's dvc.yaml and params.yaml, small, in a fresh git + DVC repository
# --------------------------------------------------------------------------------------------
TINY_PIPELINE = {
    "data": {"dataset": "numerals", "options": {"numerals": {"size": 90, "max_length": 6, "max_number": 30}}},
    "preprocess": {"workers": 1},
    "vocab": {"size": 120},
    "extract": {"workers": 1},
    "model": {"d_model": 16, "d_ff": 32, "n_layers": 1, "n_heads": 2, "vocab_size": 100},
    "families": {"rnn": {"embedding_dim": 8, "hidden_dim": 8},
                 "bert2stage": {"max_source_tokens": 40, "max_summary_tokens": 12}},  # Roy Choudhury 2020
    "models": {"PG-cov": {"arch": {"coverage_phase_steps": 2}, "train": {"max_steps": 3}},
               "M2-20": {"family": "transformer", "input": "ngram20", "rarity": True, "seeds": [1]}},
    # two seeds: a model per seed (trained side by side by the train stage), scored as a mean over them; a model
    # with seeds of its own (BERT2S in params.yaml, M2-20 here: one) keeps them (`runs` is made below)
    "train": {"max_steps": 3, "batch_size": 8, "checkpoint_every": 2, "log_every": 1, "device": "cpu",
              "seeds": [1, 2]},
    "decode": {"max_length": 6, "min_length": 1, "device": "cpu"},
    "evaluate": {"bootstrap_samples": 50},
    "crosseval": {"data": {"dataset": "numerals", "seed": 99,
                           "options": {"numerals": {"size": 20, "max_length": 6, "max_number": 30}}},
                  "max_examples": 8, "name": "numerals-99"},
    "report": {"n_samples": 1, "n_heatmaps": 1},
    "extractive": {"systems": ["lead", "textrank", "oracle"]},   # the foreach, cheaply
    # Roy Choudhury 2020: subword + pretrain stages and the bert2stage family
    "subword": {"size": 60},
    "pretrain": {"encoder": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32, "max_positions": 64},
                 "max_tokens": 16, "train": {"max_steps": 3, "batch_size": 8, "checkpoint_every": 2, "log_every": 1,
                                             "device": "cpu"}},
}



def _merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = _merge(base.get(key, {}), value) if isinstance(value, dict) else value
    return out


def _command_env() -> dict[str, str]:
    """The environment the tiny pipeline's commands run in: this venv's commands first on PATH, no analytics."""
    return {**os.environ, "DVC_NO_ANALYTICS": "1", "OMP_NUM_THREADS": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _run_command(args: list[str], cwd: Path) -> str:
    """The stdout of `args` run in `cwd` with this venv's commands first on PATH; a failure fails the test."""
    result = subprocess.run(args, cwd=cwd, env=_command_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def _build_tiny_pipeline(work: Path, params: dict | None = None, repro: bool = True) -> Path:
    """`work` made a git + DVC repository (branch main, one empty commit, a committer identity of its own
    for later commits and experiments) holding src/, dvc.yaml and params.yaml with `TINY_PIPELINE`'s
    overrides (and then `params`'), after `dvc repro` (none with `repro=False`); nothing of the build is
    committed."""
    from sumpipe.config import expand_runs

    overrides = params or {}

    shutil.copytree(REPO / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / "dvc.yaml", work / "dvc.yaml")
    shutil.copy(REPO / "constraints.txt", work / "constraints.txt")
    shutil.copy(REPO / ".gitignore", work / ".gitignore")
    params = _merge(_merge(yaml.safe_load((REPO / "params.yaml").read_text()), TINY_PIPELINE), overrides)
    params["runs"] = expand_runs(params["models"], params["train"]["seeds"])
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    _run_command(["git", "init", "-q", "-b", "main"], work)
    for key, value in (("user.name", "t"), ("user.email", "t@t")):  # commits, `dvc exp run` and `dvc exp save`
        _run_command(["git", "config", key, value], work)
    _run_command(["git", "commit", "-q", "--allow-empty", "-m", "init"], work)
    _run_command([sys.executable, "-m", "dvc", "init", "-q"], work)
    _run_command([sys.executable, "-m", "dvc", "config", "core.analytics", "false"], work)
    if repro:
        _run_command([sys.executable, "-m", "dvc", "repro"], work)
    return work


class TinyPipeline(NamedTuple):
    """`build(work, params=None, repro=True)`: the tiny pipeline built in `work` (`params`: more overrides;
    `repro=False`: set up, nothing run); `run(args, cwd)`: a command's stdout; `env()`: the environment
    `run` gives a command, for one a test starts itself."""

    build: Callable[..., Path]
    run: Callable[[list[str], Path], str]
    env: Callable[[], dict[str, str]]


@pytest.fixture(scope="session")
def tiny_pipeline() -> TinyPipeline:
    return TinyPipeline(_build_tiny_pipeline, _run_command, _command_env)


# --------------------------------------------------------------------------------------------
# Tiny transformer models, saved as training saves them (decode, models, report, reliability)
# --------------------------------------------------------------------------------------------
FIRST200, FIRST400 = Budget("first", 200), Budget("first", 400)
TINY_WORDS = ("the cat sat on the mat . the dog ate the bone . a bird flew over the house . "
              "police said the man was arrested on monday after a long chase through the city .").split()


def _transformer_card(model, selection: Budget | None = None, dataset: str = "pydoc", name: str = "m",
                      seed: int | None = None):
    from sumpipe.config import ModelSpec
    from sumpipe.models.card import ModelCard
    from sumpipe.selection.methods import selection_name

    input = selection_name(selection) if selection is not None else ""
    return ModelCard(family="transformer", arch=model.arch, vocab_size=model.vocab_size, name=name, seed=seed,
                     input=input, spec=ModelSpec(input=input, rarity=model.rarity), selection=selection,
                     dataset=dataset)


def _tiny_vocab():
    from sumpipe.vocab.vocabulary import Vocabulary

    return Vocabulary.from_counts(Counter(TINY_WORDS), 24)


def _make_model_dir(path: Path, selection: Budget | None = FIRST400, dataset: str = "pydoc", seed: int = 0,
                    scale: float = 1.0, training_seed: int | None = None, best_valid_loss: float | None = None,
                    length_control: LengthControl = "none") -> Path:
    import torch

    from sumpipe.models.io import save_pretrained
    from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer

    torch.manual_seed(seed)
    vocab = _tiny_vocab()
    arch = ArchConfig(d_model=16, d_ff=32, n_layers=1, n_heads=2, dropout=0.0, vocab_size=len(vocab),
                      max_source_tokens=40, max_summary_tokens=8, length_control=length_control)
    model = PointerGeneratorTransformer(arch)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    card = _transformer_card(model, selection, dataset)
    if training_seed is not None:  # a seed folder, models/<name>/seed-<s>, as the train stage writes it
        card = dataclasses.replace(card, name=path.parent.name, seed=training_seed)
    if best_valid_loss is not None:
        card = dataclasses.replace(card, training={"best_valid_loss": best_valid_loss})
    return save_pretrained(model, path, vocab, card)


@pytest.fixture(scope="session")
def transformer_card() -> Callable:
    """`transformer_card(model, selection=None, dataset="pydoc", name="m")`: the card training writes for a
    transformer-family `model` that reads `selection` (a Budget; None = the whole preprocessed text)."""
    return _transformer_card


@pytest.fixture
def tiny_vocab():
    """The 24-word vocabulary of `make_model_dir`'s models (TINY_WORDS)."""
    return _tiny_vocab()


@pytest.fixture(scope="session")
def make_model_dir() -> Callable[..., Path]:
    """`make_model_dir(path, selection=Budget("first", 400), dataset="pydoc", seed=0, scale=1.0,
    training_seed=None, best_valid_loss=None, length_control="none")`: a tiny untrained transformer directory
    (weights from torch
    seed `seed`, scaled up by `scale` so its choices are not near-ties); with `training_seed`, the seed
    folder of model `path.parent.name`; `best_valid_loss` goes into the card's training summary."""
    return _make_model_dir


# --------------------------------------------------------------------------------------------
# A tiny evaluated test split: six examples, two models' predictions (evaluate, report)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvalCorpus:
    sources: list[str]
    references: list[str]
    m1: list[str]  # close to the references
    m2: list[str]  # poor

    def raw_sources(self) -> list[str]:
        """The sources as downloaded: cased sentences on one line; "Mars" and "Monday" are names."""
        return [" ".join(line.replace(" .", ".").capitalize().replace(" mars", " Mars").replace(" monday", " Monday")
                         for line in source.split("\n")) for source in self.sources]

    def make_tree(self, root: Path, models: dict[str, list[str] | dict[int, list[str]]] | None = None):
        """Write processed/{train,test}, raw/{train,test} (`raw_sources`), extracted/first200/test and
        predictions/<model>/seed-<s>/test under `root` (default models: M1 and M2; a model's predictions as
        a list are its seed 1, or {seed: predictions}); return its PathsConfig. The train split is the
        test examples again (evaluate reads the names' dots of its raw texts)."""
        import pandas as pd

        from sumpipe.config import PathsConfig
        from sumpipe.io.atomic import write_parquet

        paths = PathsConfig(**{name: str(root / name) for name in PathsConfig.__dataclass_fields__})
        ids = [f"ex{i}" for i in range(len(self.sources))]
        write_parquet(pd.DataFrame({"id": ids, "source": self.sources, "reference": self.references}),
                      Path(paths.processed) / "test.parquet")
        write_parquet(pd.DataFrame({"id": [f"tr{i}" for i in range(len(ids))], "source": self.sources,
                                    "reference": self.references}), Path(paths.processed) / "train.parquet")
        write_parquet(pd.DataFrame({"id": ids, "source": self.raw_sources(), "reference": self.references}),
                      Path(paths.raw) / "test.parquet")
        write_parquet(pd.DataFrame({"id": [f"tr{i}" for i in range(len(ids))], "source": self.raw_sources(),
                                    "reference": self.references}), Path(paths.raw) / "train.parquet")
        first = [" ".join(s.replace("\n", " \n ").split(" ")[:8]).replace(" \n ", "\n") for s in self.sources]
        write_parquet(pd.DataFrame({"id": ids, "source": first, "reference": self.references,
                                    "n_tokens": [8] * len(ids), "selected": [[0]] * len(ids)}),
                      Path(paths.extracted) / "first200" / "test.parquet")
        # training word counts (the vocab stage's words.parquet): every source word 10 times, four of them rare
        counts = ({w: 10 for text in self.sources for w in text.split()}
                  | {"mars": 1, "probe": 1, "museum": 1, "bridge": 2})
        write_parquet(pd.DataFrame({"id": range(len(counts)), "token": list(counts), "count": list(counts.values())}),
                      Path(paths.vocab) / "words.parquet")
        for name, runs in (models if models is not None else {"M1": self.m1, "M2": self.m2}).items():
            for seed, preds in (runs if isinstance(runs, dict) else {1: runs}).items():
                write_parquet(pd.DataFrame({"id": ids, "prediction": preds, "reference": self.references,
                                            "decode_seconds": [0.01] * len(ids)}),
                              Path(paths.predictions) / name / f"seed-{seed}" / "test.parquet")
        return paths


EVAL_CORPUS = EvalCorpus(
    sources=[
        "the cat sat on the mat .\nit was a sunny day .\nthe dog slept .\nbirds sang loudly .",
        "stocks fell sharply on monday .\ninvestors worried about rates .\nbanks led the decline .",
        "the team won the final .\nfans celebrated in the streets .\nthe coach praised the players .\nit rained .",
        "a new bridge opened in the city .\ntraffic eased at once .\nofficials cut the ribbon .",
        "scientists found water on mars .\nthe probe sent images .\nmore missions are planned .",
        "the museum reopened after repairs .\nvisitors queued for hours .\ntickets sold out .",
    ],
    references=[
        "the cat sat on the mat on a sunny day .",
        "stocks fell as investors worried about rates .",
        "the team won the final and fans celebrated .",
        "a new bridge opened and traffic eased .",
        "water found on mars by a probe .",
        "the museum reopened and tickets sold out .",
    ],
    m1=[
        "the cat sat on the mat .\nit was sunny .",
        "stocks fell .\ninvestors worried about rates .",
        "the team won the final .\nfans celebrated .",
        "a bridge opened .\ntraffic eased .",
        "water on mars found by probe .",
        "museum reopened .\ntickets sold out .",
    ],
    m2=["cat .", "banks .", "coach .", "ribbon .", "images .", "hours ."],
)


@pytest.fixture(scope="session")
def eval_corpus() -> EvalCorpus:
    """Six test examples (sources, references) and two models' predictions; `.make_tree(root)` writes them as
    the evaluate stage reads them."""
    return EVAL_CORPUS


def _make_eval_model(path: Path, selection: Budget = FIRST200, seed: int | None = None) -> Path:
    import torch

    from sumpipe.models.io import save_pretrained
    from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer
    from sumpipe.vocab.vocabulary import Vocabulary

    torch.manual_seed(0)
    words = " ".join(EVAL_CORPUS.sources + EVAL_CORPUS.references).split()
    vocab = Vocabulary.from_counts(Counter(words), 40)
    arch = ArchConfig(d_model=16, d_ff=32, n_layers=1, n_heads=2, dropout=0.0, vocab_size=len(vocab),
                      max_source_tokens=40, max_summary_tokens=8)
    model = PointerGeneratorTransformer(arch)
    name = path.parent.name if seed is not None else path.name
    return save_pretrained(model, path, vocab, _transformer_card(model, selection, "pydoc", name, seed))


@pytest.fixture(scope="session")
def make_eval_model() -> Callable[..., Path]:
    """`make_eval_model(path, selection=Budget("first", 200))`: a tiny untrained model directory (vocabulary:
    eval_corpus's words) that reads `selection`, saved the way training saves one."""
    return _make_eval_model


# --------------------------------------------------------------------------------------------
# A 3-gram table and a five-sentence document (Morozovskii 2022 Alg. 1: selection.select, the ngram extractive method)
# --------------------------------------------------------------------------------------------
def _ngram_table(grams: dict[str, int]):
    """A table from {"w1 w2 w3": count}."""
    import numpy as np

    from sumpipe.vocab.ngrams import NgramTable, pack_ngrams

    triples = [g.split() for g in grams]
    words = sorted({w for t in triples for w in t})
    ids = {w: i for i, w in enumerate(words)}
    keys = pack_ngrams(np.array([[ids[w] for w in t] for t in triples]))
    order = np.argsort(keys)
    return NgramTable(n=3, keys=keys[order], counts=np.array(list(grams.values()), np.uint32)[order], words=words)


@pytest.fixture(scope="session")
def ngram_table():
    return _ngram_table({"police arrested man": 500, "man charged murder": 400, "rare orchid bloomed": 2,
                         "orchid bloomed kew": 3})


@pytest.fixture(scope="session")
def ngram_doc() -> list[list[str]]:
    """Five tokenized sentences; the comments give each one's score in `ngram_table`."""
    return [
        "police arrested a man on monday .".split(),  # 0: the lead (one known and one unknown 3-gram)
        "the man was charged with murder .".split(),  # 1: (man charged murder) 400 -> 0.384
        "a rare orchid bloomed at kew .".split(),  # 2: rare grams -> (3.32 + 2.10) / 2
        "police arrested the man .".split(),  # 3: (police arrested man) 500 -> 0.370
        "it was .".split(),  # 4: no 3-gram -> 0
    ]


@contextmanager
def _read_only(folder: Path) -> Iterator[Path]:
    """`folder` refusing every new file, root included (chattr +i: EPERM); chmod a-w for a user who is not
    root; the test is skipped where neither works."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                        capture_output=True).returncode != 0:
        pytest.skip("root, and no chattr +i here: a read-only folder cannot be built")
    try:
        yield folder
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.fixture(scope="session")
def read_only() -> Callable[[Path], AbstractContextManager[Path]]:
    """`with read_only(folder):` the folder refuses every new file inside the block (tests/io's bookkeeping
    and the fault suite's obstacle matrix)."""
    return _read_only
