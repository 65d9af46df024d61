"""The data-set registry: a data set added from this file alone, one with options of its own added as one
module plus one registry line, the built-in entries, their options and their lengths."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from sumpipe.config import DataConfig, DecodeConfig, SplitRatios
from sumpipe.data.datasets import DATASETS, Dataset, Lengths, NoOptions, Rows, dataset_of, lengths_of, options_of
from sumpipe.data.download import download
from sumpipe.errors import ConfigError


def load_toy(cfg: DataConfig, options: NoOptions) -> Rows:
    """Seven examples: two with a split of their own per split, one left to the stable hash split."""
    rows = [{"id": f"toy-{i}", "source": f"toy source {i}", "reference": f"toy summary {i}",
             "split": ("train", "valid", "test")[i % 3]} for i in range(6)]
    rows.append({"id": "toy-hashed", "source": "no split of its own", "reference": "hash decides"})
    return rows, {"seed": cfg.seed}


DATASETS.register("toy", Dataset(load=load_toy, lengths=Lengths(max_summary=7)))


def test_a_data_set_registered_from_a_test_file_downloads(tmp_path: Path) -> None:
    # train 1.0: the example without a split goes to train
    stats = download(DataConfig(dataset="toy", seed=5, split_ratios=SplitRatios(1.0, 0.0, 0.0)), tmp_path)
    assert pq.read_table(tmp_path / "train.parquet").to_pylist() == [
        {"id": "toy-0", "source": "toy source 0", "reference": "toy summary 0"},
        {"id": "toy-3", "source": "toy source 3", "reference": "toy summary 3"},
        {"id": "toy-hashed", "source": "no split of its own", "reference": "hash decides"},
    ]
    assert pq.read_table(tmp_path / "valid.parquet").column("id").to_pylist() == ["toy-1", "toy-4"]
    assert pq.read_table(tmp_path / "test.parquet").column("id").to_pylist() == ["toy-2", "toy-5"]
    written = json.loads((tmp_path / "stats.json").read_text())
    assert written == stats
    assert (written["dataset"], written["toy"], written["counts"]) == ("toy", {"seed": 5},
                                                                        {"train": 3, "valid": 2, "test": 2})


def test_decoding_takes_the_cap_from_the_registered_entry() -> None:
    from sumpipe.decode.batches import resolve_max_length

    card = SimpleNamespace(dataset="toy", max_summary_tokens=50)
    assert resolve_max_length(DecodeConfig(), card) == 7
    assert resolve_max_length(DecodeConfig(max_length=9), card) == 9


@pytest.mark.parametrize(("name", "max_summary_tokens", "cap"), [
    ("cnn_dailymail", 100, 120), ("CNNDM", 100, 120), ("xsum", 20, 30), ("gigaword", 18, 25), ("duc", 60, 25),
    ("duc2004", 60, 25),                                       # Morozovskii 2022 Table 4.3
    ("pydoc", 60, 48), ("pydoc", 8, 10),                       # 1.2 x min(max_summary_tokens, 40-word references)
    ("numerals", 60, 72), ("local", 18, 22), ("", 5, 6), ("my-corpus", 60, 72),   # 1.2 x max_summary_tokens
])
def test_length_defaults_of_the_built_in_data_sets(name: str, max_summary_tokens: int, cap: int) -> None:
    assert lengths_of(name).decode_cap(max_summary_tokens) == cap


def test_every_built_in_name_is_registered_by_its_module() -> None:
    for name in DATASETS.builtin:
        assert isinstance(DATASETS.get(name, "data.dataset"), Dataset), name
    assert {"pydoc", "numerals", "local", "cnn_dailymail", "xsum", "gigaword"} <= set(DATASETS.builtin)


def test_an_unknown_data_set_is_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        download(DataConfig(dataset="imdb"), tmp_path / "raw")
    assert str(info.value) == f"data.dataset: unknown dataset 'imdb' (known: {', '.join(DATASETS.names())})"
    assert "toy" in DATASETS.names() and not (tmp_path / "raw").exists()
    with pytest.raises(ConfigError) as info:
        dataset_of(DataConfig(dataset="imdb"), "crosseval.data")
    assert str(info.value).startswith("crosseval.data.dataset: unknown dataset 'imdb' (known: cnn_dailymail, ")


# --- a data set with an option of its own: one module (its options beside its loader) + one line -----
COUNTDOWN_MODULE = """\"\"\"Countdowns: n numbers down to 1.\"\"\"

from dataclasses import dataclass

from sumpipe.config import DataConfig
from sumpipe.data.datasets import DATASETS, Dataset, Rows
from sumpipe.validation import require


@dataclass(frozen=True)
class CountdownOptions:
    size: int = 3

    def check(self, key: str) -> None:
        require(self.size >= 1, f"{key}.size", "must be >= 1")


def load_countdown(cfg: DataConfig, options: CountdownOptions) -> Rows:
    rows = [{"id": f"cd-{n}", "source": " ".join(str(k) for k in range(n, 0, -1)), "reference": f"from {n}",
             "split": "test" if n == 1 else "train"} for n in range(1, options.size + 1)]
    return rows, {"size": options.size}


DATASETS.register("countdown", Dataset(load=load_countdown, options=CountdownOptions))
"""


@pytest.fixture
def countdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The module written to a folder on sys.path, and its one line in the registry's builtin map
    (imported afresh by each test: the registry is restored after each)."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "sumpipe_toy_countdown.py").write_text(COUNTDOWN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    for name in DATASETS.builtin:  # the shipped ones registered first (their modules register only once)
        DATASETS.get(name, "data.dataset")
    monkeypatch.setattr(DATASETS, "entries", dict(DATASETS.entries))
    monkeypatch.setitem(DATASETS.builtin, "countdown", "sumpipe_toy_countdown")   # the one line
    yield tmp_path
    sys.modules.pop("sumpipe_toy_countdown", None)


def test_a_data_set_with_its_own_option_is_one_module_and_one_line(countdown: Path) -> None:
    from sumpipe.config import params_from_dict

    params = params_from_dict({"data": {"dataset": "countdown", "options": {"countdown": {"size": 5}}}})
    stats = download(params.data, countdown / "raw")
    assert stats["countdown"] == {"size": 5} and stats["counts"] == {"train": 4, "valid": 0, "test": 1}
    assert pq.read_table(countdown / "raw" / "train.parquet").column("source").to_pylist()[-1] == "5 4 3 2 1"
    assert options_of(params_from_dict({"data": {"dataset": "countdown"}}).data, "countdown").size == 3  # default
    from sumpipe.docs.blocks import BLOCKS, Sources  # docs/datasets.md's list
    assert "| `countdown` | Countdowns: n numbers down to 1. | `sumpipe_toy_countdown.py` | `size` (3) | 1.2 x " \
           "the model's summary length |" in BLOCKS["datasets"](Sources(countdown, params))


@pytest.mark.parametrize(("options", "message"), [
    ({"countdown": {"size": 0}}, "data.options.countdown.size: must be >= 1"),
    ({"countdown": {"sise": 2}}, "data.options.countdown.sise: unknown key (known: size)"),
    ({"countdown": {"size": "big"}}, "data.options.countdown.size: expected int, got 'big'"),
    ({"countdwn": {"size": 2}}, "data.options.countdwn: unknown dataset 'countdwn' (known: "),
    ({"gigaword": {"size": 2}}, "data.options.gigaword: the 'gigaword' data set takes no options"),
    ({"local": {"size": 2}},
     "data.options.local.size: unknown key (known: max_gunzipped_gib, max_inflation, resplit, splits)"),
    # another data set's options are checked too: a typo there is not left for a later run
    ({"numerals": {"max_length": 45, "max_number": 50}}, "data.options.numerals.max_number: must be >= 2 * max_len"),
])
def test_a_bad_option_is_one_line_naming_its_key(countdown: Path, options: dict, message: str) -> None:
    from sumpipe.config import params_from_dict

    params = params_from_dict({"data": {"dataset": "countdown", "options": options}})
    with pytest.raises(ConfigError) as info:
        download(params.data, countdown / "raw")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert not (countdown / "raw").exists()


def test_the_default_data_sets_read_their_options_from_params(repo_root: Path) -> None:
    from sumpipe.config import load_params
    from sumpipe.data.pydoc_corpus import PydocOptions

    params = load_params(repo_root / "params.yaml")
    assert options_of(params.data, "pydoc") == PydocOptions()                   # params.yaml = the defaults
    assert options_of(params.crosseval.data, "pydoc", "crosseval.data").packages == ["matplotlib"]
