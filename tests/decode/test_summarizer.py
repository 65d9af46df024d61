"""`sumpipe.load` and its Summarizer (`sumpipe.decode.summarizer`): the command's resolver, the decoding
options and their one-line errors, one text or a list, lazy weights, and the project folder."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from sumpipe.config import DecodeConfig, Params
from sumpipe.decode.summarizer import Summarizer, Summary, decode_config, load, open_project
from sumpipe.errors import ConfigError, SumpipeError

TEXT = "Police said the man was arrested on Monday. The dog ate the bone."


@pytest.mark.parametrize(("options", "field", "value"), [
    ({"beam": 2}, "beam_size", 2), ({"beam": 2}, "strategy", "beam"), ({"greedy": True}, "strategy", "greedy"),
    ({"sample": True, "top_k": 5}, "strategy", "sample"), ({"block_ngram": 0}, "block_ngram_repeat", 0),
    ({"batch_size": 3, "beam": None}, "batch_size", 3), ({"beam": None}, "strategy", "beam"),
    ({"novel_bigram_penalty": 1.5}, "novel_bigram_penalty", 1.5),
])
def test_options_map_onto_the_decode_section(options: dict, field: str, value) -> None:
    assert getattr(decode_config(DecodeConfig(strategy="beam", beam_size=4), options), field) == value


@pytest.mark.parametrize(("options", "message"), [
    ({"beam": 0}, "beam: must be >= 1"),
    ({"top_p": 1.5}, "top_p: must be in (0, 1]"),
    ({"greedy": True, "sample": True}, "greedy and sample exclude each other"),
    ({"beem": 4}, "beem: unknown decoding option (known: banned_words, batch_size, beam, block_adjacent, block_ngram, "
                  "greedy, known_words, length, length_penalty, "),
    ({"length": 0}, "length: must be in [1, 1000] (or null)"),
    ({"novel_bigram_penalty": -1.0}, "novel_bigram_penalty: must be in [0, 20] (0 = off)"),
])
def test_a_bad_option_is_one_line_naming_it(options: dict, message: str) -> None:
    with pytest.raises(SumpipeError) as info:
        decode_config(DecodeConfig(), options)
    assert str(info.value).startswith(message)


def test_the_command_spells_the_option_its_way() -> None:
    with pytest.raises(SumpipeError, match=r"^--top-p: must be in \(0, 1\]"):
        decode_config(DecodeConfig(), {"top_p": 1.5}, lambda k: "--" + k.replace("_", "-"))


def test_a_project_without_params_yaml_has_the_defaults(tmp_path: Path) -> None:
    project = open_project(tmp_path)
    assert project.models_root == tmp_path / "models" and project.metrics_file == tmp_path / "metrics" / "rouge.json"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"paths": {"models": "trained"}, "decode": {"beam_size": 2}}))
    project = open_project(tmp_path)
    assert project.models_root == tmp_path / "trained" and project.params.decode.beam_size == 2
    with pytest.raises(ConfigError, match="no such params file"):
        open_project(tmp_path, tmp_path / "other.yaml")        # a params file asked for must be there


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, make_model_dir) -> Path:
    root = tmp_path_factory.mktemp("project")
    make_model_dir(root / "models" / "M1", seed=0)
    make_model_dir(root / "models" / "M2", seed=1)
    return root


def test_names_folders_and_the_default_go_through_the_command_s_resolver(project: Path) -> None:
    assert load("M2", project=project).model_dir == project / "models" / "M2"
    assert load(project / "models" / "M1").name == "M1"                        # a folder, from anywhere
    assert load(project=project).name == "M1"                                  # no metrics: M1
    (project / "metrics").mkdir()
    (project / "metrics" / "rouge.json").write_text(json.dumps({"M1": {"rougeL": 20.0}, "M2": {"rougeL": 21.0}}))
    try:
        assert load(project=project).name == "M2"                              # the best R-L
    finally:
        (project / "metrics" / "rouge.json").unlink()
    with pytest.raises(SumpipeError, match=r"^unknown model 'M7'; trained models in .*: M1, M2; or give a model"):
        load("M7", project=project)


def test_loading_reads_the_card_and_the_weights_wait(project: Path) -> None:
    s = load("M1", project=project)
    assert repr(s) == "<Summarizer M1: transformer, input first400>" and s.card.family == "transformer"
    assert s._loaded is None
    s.summarize(TEXT)
    assert s._loaded is not None and s.weights() is s._loaded                 # loaded once, kept


def test_one_text_gives_a_summary_and_a_list_gives_a_list(project: Path) -> None:
    s = load("M1", project=project)
    one = s.summarize(TEXT, beam=2)
    many = s.summarize([TEXT, "Привет", TEXT], beam=2)
    assert isinstance(one, Summary) and [type(x) for x in many] == [Summary] * 3
    # the same words alone and in a batch; the score to float32 rounding (MKL's COMPATIBLE GEMM of the
    # portable kernels sums a batch of 3 padded rows in another order than one row)
    assert many[0] == many[2] and many[0].tokens == one.tokens
    assert many[0].score == pytest.approx(one.score, rel=1e-6)
    assert many[1] == Summary([], "", None, [], error="no Latin-script text to summarise (preprocessing keeps "
                                                      "ASCII only)", source="Привет")
    assert many[1].text == ""
    assert one.p_gen is None and one.attention is None                          # details only when asked
    assert one.tokens == one.tokenized.split() and str(one) == one.text
    assert one.source_tokens == "police said the man was arrested on monday . the dog ate the bone .".split()


@pytest.mark.parametrize(("texts", "message"), [
    ("Привет мир", "the input has no Latin-script text"),
    (["Привет", "!!!"], "none of the 2 documents has Latin-script text to summarise"),  # no double negative
])
def test_nothing_to_summarise_is_one_line(project: Path, texts, message: str) -> None:
    with pytest.raises(SumpipeError, match=f"^{message}"):
        load("M1", project=project).summarize(texts)


def test_summarizer_is_built_from_a_folder_and_a_project(project: Path) -> None:
    s = Summarizer(project / "models" / "M2", open_project(project), device="cpu")
    assert (s.name, s.device, s.config) == ("M2", "cpu", Params().decode)  # the project's (params.yaml's) decoding


def test_a_summary_loads_none_of_the_slow_imports(project: Path) -> None:
    # each takes longer to import than a summary takes to decode: nltk (its package __init__ loads
    # SciPy), pandas, pyarrow.dataset, and torch._dynamo (pulled in by arithmetic on the meta device)
    slow = ["nltk", "pandas", "pyarrow.dataset", "torch._dynamo"]
    code = (f"import sys, sumpipe; s = sumpipe.load('M1').summarize('The dog ate the bone.'); "
            f"text = s.text; print([m for m in {slow!r} if m in sys.modules], text == str(s))")
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] True"


def test_a_length_cap_given_lowers_the_configured_minimum() -> None:
    base = DecodeConfig(min_length=10)
    assert decode_config(base, {"max_length": 5}).min_length == 5  # not an error: the caller's cap wins
    assert decode_config(base, {"max_length": 20}).min_length == 10
    with pytest.raises(SumpipeError, match=r"^min_length: must be <= max_length \(5\)"):
        decode_config(base, {"max_length": 5, "min_length": 8})  # both given: a contradiction, said


# --------------------------------------------------------------------------------------------
# A model's seeds as one summarizer
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory, make_model_dir) -> Path:
    """models/M1 with seeds 1, 2 and 3 (seed 2 has the lowest validation loss)."""
    root = tmp_path_factory.mktemp("seeded")
    for seed, loss in ((1, 4.5), (2, 4.4), (3, 4.6)):
        make_model_dir(root / "models" / "M1" / f"seed-{seed}", seed=seed, scale=3.0, training_seed=seed,
                       best_valid_loss=loss)
    return root


def test_ensemble_loads_every_seed_and_seeds_a_subset(seeded: Path) -> None:
    from sumpipe.decode.ensemble import EnsembleModel

    every = load("M1", ensemble=True, project=seeded)
    assert (every.seeds, every.seed, every.is_ensemble) == ([1, 2, 3], None, True)
    assert repr(every) == "<Summarizer M1 (an ensemble of 3 seeds): transformer, input first400>"
    assert every.members == [seeded / "models" / "M1" / f"seed-{s}" for s in (1, 2, 3)] and every.name == "M1"
    assert every._loaded is None                                   # the card only, until the first summary
    summary = every.summarize(TEXT, beam=2)
    model = every.weights()[0]
    assert isinstance(model, EnsembleModel) and len(model.members) == 3 and summary.tokens
    pair = load("M1", seeds=[3, 1], project=seeded)
    assert pair.seeds == [1, 3] and len(pair.weights()[0].members) == 2
    assert load("M1", seeds=[2], project=seeded).seeds == [2]      # one seed: that seed alone
    assert not load("M1", seeds=[2], project=seeded).is_ensemble
    assert load("M1", seeds=[1, 2], ensemble=True, project=seeded).seeds == [1, 2]


def test_an_ensemble_summary_is_the_search_over_the_mean(seeded: Path) -> None:
    """The API's summary is beam search over `EnsembleModel` of the members, loaded one by one."""
    from sumpipe.decode.batches import load_model, summarize
    from sumpipe.decode.ensemble import EnsembleModel

    s = load("M1", seeds=[1, 3], project=seeded)
    loaded = [load_model(folder) for folder in s.members]
    by_hand = summarize(EnsembleModel([m for m, _, _ in loaded]), loaded[0][1], loaded[0][2], s.prepare([TEXT]),
                        dataclasses.replace(s.config, beam_size=3))
    assert s.summarize(TEXT, beam=3).tokens == by_hand[0].tokens


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seed": 1, "ensemble": True}, "seed picks one seed's weights, ensemble all of them"),
    ({"seed": 1, "seeds": [1, 2]}, "seed and seeds exclude each other"),
    ({"seeds": []}, "seeds: give at least one training seed"),
    ({"seeds": [1, 7]}, "--train-seed 7: .*M1 has no such seed \\(trained: 1, 2, 3\\)"),
])
def test_ensemble_arguments_that_cannot_hold_are_one_line(seeded: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(SumpipeError, match=message):
        load("M1", project=seeded, **kwargs)


def test_a_model_folder_is_no_folder_of_seeds_to_ensemble(project: Path) -> None:
    with pytest.raises(SumpipeError, match=r"--ensemble: .*models/M1 is one trained model, not a folder of seeds"):
        load("M1", ensemble=True, project=project)


def test_an_ensemble_of_params_opens_by_its_name(seeded: Path, tmp_path: Path) -> None:
    # the README's tables name the ensembles (PG-cov-ens); `sumpipe decode --model NAME` and load(NAME) open
    # the seeds the predict stage decodes for it, params.yaml's, not every seed under models/
    params = tmp_path / "params.yaml"
    params.write_text("models:\n  M1: {family: transformer, input: first400}\n"
                      "train: {seeds: [1, 2, 3]}\nensembles:\n  M1-ens: {model: M1, seeds: [1, 3]}\n")
    s = load("M1-ens", project=seeded, params=params)
    assert (s.is_ensemble, s.seeds, s.name) == (True, [1, 3], "M1")
    assert s.members == [seeded / "models" / "M1" / "seed-1", seeded / "models" / "M1" / "seed-3"]
    for kwargs in ({"seed": 2}, {"seeds": [1, 2]}):
        with pytest.raises(SumpipeError, match=r"^M1-ens is an ensemble \(ensembles.M1-ens in params.yaml\) and its "
                                               r"seeds are params.yaml's: open its model M1 to choose seeds$"):
            load("M1-ens", project=seeded, params=params, **kwargs)


# The Python API from several threads at once (a web server's worker threads sharing one summarizer): every
# call gets a lone call's summary, the weights load once, torch's thread count is restored.

def test_one_summarizer_from_several_threads_at_once(workdir, article) -> None:
    import torch

    import sumpipe

    texts = [article, "the cat sat on the mat .", "police said the man was arrested on monday .", "", article[:60]]
    alone = [s.tokenized for s in sumpipe.load("M1", project=workdir, device="cpu").summarize(texts)]
    before = torch.get_num_threads()
    summarizer = sumpipe.load("M1", project=workdir, device="cpu")  # weights not loaded yet: the threads race for it
    import sumpipe.decode.batches as batches

    loaded = []
    real_load = batches.load_model

    def counted(*args, **kwargs):
        loaded.append(threading.get_ident())
        return real_load(*args, **kwargs)

    barrier = threading.Barrier(4)

    def call(i: int) -> list[str]:
        barrier.wait()
        out = []
        for k in range(2):
            j = (i + k) % len(texts)
            out.append((j, summarizer.summarize([texts[j]], strict=False, threads=1 + i % 2)[0].tokenized))
        return out

    batches.load_model = counted
    try:
        with ThreadPoolExecutor(4) as pool:
            results = [r for part in pool.map(call, range(4)) for r in part]
    finally:
        batches.load_model = real_load
    assert all(tokens == alone[j] for j, tokens in results)
    assert summarizer._loaded is not None and summarizer.weights() is summarizer.weights()
    assert torch.get_num_threads() == before  # no thread count left behind by interleaved calls
    assert len(loaded) == 1  # the threads that raced for the weights loaded them once


def test_interleaved_thread_blocks_restore_the_count_from_before_the_first() -> None:
    import torch

    from sumpipe.device import torch_threads

    before = torch.get_num_threads()
    a, b = torch_threads(1), torch_threads(2)
    a.__enter__()
    b.__enter__()  # b saw 1, the count a set
    a.__exit__(None, None, None)
    b.__exit__(None, None, None)  # b ends last: the count from before a, not a's 1
    assert torch.get_num_threads() == before
