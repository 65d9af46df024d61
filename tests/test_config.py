"""params.yaml validation: typed objects, one-line errors that name the key."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from sumpipe.config import DecodeConfig, Params, Run, load_params, params_from_dict
from sumpipe.errors import ConfigError


def test_repository_params_file_validates(repo_root: Path) -> None:
    params = load_params(repo_root / "params.yaml")
    assert isinstance(params, Params)
    assert params.data.dataset == "pydoc"
    # the thesis's 400/200-token budgets scaled to the default corpus (params-paper.yaml keeps 400/200)
    assert [(b.method, b.tokens, b.first_k) for b in params.extract.budgets][:3] == [
        ("first", 40, None), ("ngram", 40, 1), ("ngram", 20, 1)]
    assert {"transformer", "rnn"} <= {spec.family for spec in params.models.values()}
    assert list(params.models) == ["M1", "M2", "PG-cov", "BERT2S"]  # the hybrids: experiments/cnn, params-paper.yaml
    assert params.models["PG-cov"].family == "rnn" and params.families["rnn"]["cell"] == "lstm"
    # the extractive methods compared at the models' budget
    assert {b.tokens for b in params.extract.budgets[3:]} == {40}
    assert params.extractive.systems[-1] == "oracle" and params.extractive.sentences == 1
    assert params.models["BERT2S"].family == "bert2stage"  # Roy Choudhury 2020


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"vocab": {"size": "big"}}, "vocab.size: expected int, got 'big'"),
        ({"vocab": {"size": True}}, "vocab.size: expected int, got True"),
        ({"data": {"datset": "pydoc"}}, "data.datset: unknown key"),
        ({"data": {"split_ratios": {"train": 0.5, "valid": 0.1, "test": 0.1}}}, "data.split_ratios: train + valid"),
        ({"extract": {"budgets": [{"tokens": 200}]}}, "extract.budgets[0].method: required key is missing"),
        ({"extract": {"budgets": [{"method": "first", "tokens": 200}, {"method": "first", "tokens": 200}]}},
         "extract.budgets: each (method, tokens) may appear only once"),
        ({"train": {"lr": "fast"}}, "train.lr: expected float, got 'fast'"),
        ({"decode": {"split": "all"}}, "decode.split: expected one of 'train', 'valid', 'test', got 'all'"),
        ({"crosseval": {"split": "dev"}},
         "crosseval.split: expected one of 'train', 'valid', 'test', 'all', got 'dev'"),
        ({"train": {"early_stopping_metric": "rouge"}}, "train.early_stopping_metric: expected one of"),
        # the scoring protocol and a corpus's own decoding
        ({"evaluate": {"protocol": {"references": "max"}}}, "evaluate.protocol.references: expected one of 'best', "),
        ({"crosseval": {"protocol": {"max_bytes": 0}}}, "crosseval.protocol.max_bytes: must be >= 1 (or null)"),
        ({"evaluate": {"prefix_bytes": [75, 75]}}, "evaluate.prefix_bytes: lists a size twice"),
        ({"evaluate": {"prefix_bytes": [0]}}, "evaluate.prefix_bytes[0]: must be between 1 and 65536"),
        ({"crosseval": {"decode": {"min_lenght": 13}}}, "crosseval.decode.min_lenght: unknown key"),
        ({"crosseval": {"decode": {"min_length": 30}}, "decode": {"max_length": 25}},
         "crosseval.decode.min_length: must be <= max_length (25)"),
        # non-finite numbers, an overflowing length penalty, two spellings of one model name
        ({"train": {"lr": float("inf")}}, "train.lr: must be a finite number, got inf"),
        ({"decode": {"length_penalty": float("nan")}}, "decode.length_penalty: must be a finite number, got nan"),
        ({"decode": {"length_penalty": 1e300}}, "decode.length_penalty: must be in [0, 10]"),
        ({"models": {1: {"family": "transformer"}, "1": {"family": "rnn"}}}, "models.1: the name '1' is given twice"),
        # weight averaging
        ({"train": {"ema_decay": 1.0}}, "train.ema_decay: must be in (0, 1) (or null: no weight averaging)"),
        # the weight of <unk> targets
        ({"train": {"unk_target_weight": 1.5}}, "train.unk_target_weight: must be in [0, 1]"),
        ({"train": {"unk_target_weight": "none"}}, "train.unk_target_weight: expected float, got 'none'"),
        ({"train": {"copy_attention_weight": -1}}, "train.copy_attention_weight: must be in [0, 100]"),
        ({"train": {"copy_target_weight": 0.5}}, "train.copy_target_weight: must be in [1, 100]"),
        # sentence boundaries in the targets, a minimum of sentences when decoding
        ({"train": {"sentence_ends": "yes"}}, "train.sentence_ends: expected true or false, got 'yes'"),
        ({"decode": {"min_sentences": -1}}, "decode.min_sentences: must be >= 0 (0 = off)"),
    ],
)
def test_bad_values_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        params_from_dict(data)
    text = str(info.value)
    assert message in text
    assert "\n" not in text


def test_ints_are_accepted_for_floats() -> None:
    assert params_from_dict({"train": {"lr": 1}}).train.lr == 1.0


def test_yaml_syntax_error_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "params.yaml"
    bad.write_text("data: [unclosed\n")
    with pytest.raises(ConfigError, match=r"not valid YAML at line \d+"):
        load_params(bad)


def test_non_utf8_params_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "params.yaml"
    bad.write_bytes("data: {path: caf\xe9}\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_params(bad)


def test_missing_params_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such params file"):
        load_params(tmp_path / "nope.yaml")


def test_a_hybrid_name_must_match_its_budget() -> None:
    budgets = [{"method": "first", "tokens": 40}, {"method": "ngram", "tokens": 20}]
    ok = {"extract": {"budgets": budgets},
          "models": {"M1": {"input": "first40"}, "M1-20": {"input": "ngram20"}, "BiLSTM-000": {"input": "first40"}}}
    params_from_dict(ok)  # BiLSTM-000 is not "<model>-<N>" of a named model: no budget claimed
    lying = {"extract": {"budgets": budgets}, "models": {"M1": {"input": "first40"}, "M1-200": {"input": "ngram20"}}}
    with pytest.raises(ConfigError, match=r"^models\.M1-200\.input: ngram20 holds 20 tokens but the name says 200"):
        params_from_dict(lying)


def test_loading_params_imports_no_model_code(repo_root: Path) -> None:
    # The families' arch types live beside their models (torch); params.yaml's `model:` and
    # `families:` stay mappings until a model is resolved, so every stage validates its params fast.
    import subprocess
    import sys

    code = ("import sys; from sumpipe.config import load_params; load_params('params.yaml'); "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('sumpipe.models')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=repo_root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- one source of defaults: the dataclass defaults are params.yaml's values ------------------------
# Entries of params.yaml that are data (this run's choices), not the default of a key; everything else
# must equal its code default.
PARAMS_DATA = {
    "models": "the named models of this run (code default: none)",
    "runs": "every model with each of its seeds (code default: none)",
    "ensembles": "the ensembles of this run (code default: none)",
    "extract.budgets": "this corpus's selections (code default: the thesis's 200/400-token budgets)",
    "extractive.options": "options chosen for this corpus, per method (code default: each method's own)",
    "crosseval.models": "names entries of `models:`, which is data",
}


def _arch_defaults() -> dict:
    """The sections validated by a registry entry: their defaults are its dataclass's (a model family's
    arch type, a data set's options)."""
    from sumpipe.data.numerals import NumeralsOptions
    from sumpipe.data.pydoc_corpus import PydocOptions
    from sumpipe.models.bert2stage import Bert2StageArch
    from sumpipe.models.rnn import RNNArch
    from sumpipe.models.transformer import ArchConfig

    return {"model": ArchConfig(), "families.rnn": RNNArch(), "families.bert2stage": Bert2StageArch(),
            "data.options.pydoc": PydocOptions(), "data.options.numerals": NumeralsOptions()}


_NO_DEFAULT = object()


def first_default_difference(value, default, key: str, arch_defaults: dict) -> str | None:
    """The first key under `key` whose params.yaml `value` differs from the code's `default` (None: none)."""
    if key in PARAMS_DATA:
        return None
    if isinstance(value, dict):
        for name, item in value.items():
            sub = f"{key}.{name}" if key else name
            if sub in arch_defaults:
                child = arch_defaults[sub]
            elif dataclasses.is_dataclass(default):
                child = getattr(default, name, _NO_DEFAULT)
            else:
                child = default.get(name, _NO_DEFAULT) if isinstance(default, dict) else _NO_DEFAULT
            found = first_default_difference(item, child, sub, arch_defaults)
            if found:
                return found
        return None
    if default is _NO_DEFAULT:
        return f"{key}: params.yaml {value!r}, no code default"
    if isinstance(value, list) and value and isinstance(value[0], dict):
        default = [dataclasses.asdict(d) if dataclasses.is_dataclass(d) else d for d in default]
    if value != default or isinstance(value, bool) != isinstance(default, bool):  # true is not 1
        return f"{key}: params.yaml {value!r}, code default {default!r}"
    return None


def test_the_code_defaults_are_params_yaml(repo_root: Path) -> None:
    raw = yaml.safe_load((repo_root / "params.yaml").read_text())
    assert first_default_difference(raw, Params(), "", _arch_defaults()) is None
    assert {"model", "families", "pretrain", "crosseval"} <= set(raw)  # the walk saw the nested sections


@pytest.mark.parametrize(("key", "value"), [
    ("train.lr", 0.5), ("model.max_source_tokens", 200), ("families.rnn.hidden_dim", 256),
    ("families.bert2stage.refine_positions", None), ("pretrain.train.batch_size", 32),
    ("crosseval.data.options.pydoc.packages", ["numpy"]), ("report.n_heatmaps", 2), ("extractive.sentences", 3),
    ("data.options.pydoc.min_source_words", 5), ("data.options.numerals.size", 10),
])
def test_a_default_that_drifts_from_params_yaml_is_named(repo_root: Path, key: str, value) -> None:
    raw = yaml.safe_load((repo_root / "params.yaml").read_text())
    *parents, leaf = key.split(".")
    node = raw
    for part in parents:
        node = node[part]
    node[leaf] = value
    found = first_default_difference(raw, Params(), "", _arch_defaults())
    assert found is not None and found.startswith(f"{key}: params.yaml {value!r}, code default")


def test_a_partial_section_keeps_its_own_defaults() -> None:
    # `pretrain.train:` overrides pretrain's training defaults, not the `train:` section's
    params = params_from_dict({"pretrain": {"train": {"lr": 0.5}}, "train": {"epochs": 2}})
    assert params.pretrain.train == dataclasses.replace(Params().pretrain.train, lr=0.5)
    assert (params.pretrain.train.patience, params.pretrain.train.max_steps) == (None, 100)
    assert params.train == dataclasses.replace(Params().train, epochs=2) and params.train.patience == 1


def test_crosseval_decodes_with_its_own_keys_over_the_decode_section() -> None:
    params = params_from_dict({"decode": {"max_length": 25, "beam_size": 3},
                               "crosseval": {"decode": {"min_length": 13}}})
    decode = params.crosseval.decode_config(params.decode)
    assert (decode.min_length, decode.max_length, decode.beam_size) == (13, 25, 3)
    assert params.decode.min_length == 1  # the decode section's (the code default), untouched
    assert params_from_dict({}).crosseval.decode_config(params.decode) is params.decode


# --------------------------------------------------------------------------------------------
# Bounds on the params file itself, and no input inside an output folder
# --------------------------------------------------------------------------------------------
def test_a_params_file_past_one_mib_is_refused_before_parsing(tmp_path: Path) -> None:
    from sumpipe.config import MAX_PARAMS_BYTES

    big = tmp_path / "params.yaml"
    big.write_bytes(b"# " + b"x" * MAX_PARAMS_BYTES + b"\n")
    with pytest.raises(ConfigError, match=r"params\.yaml: larger than 1 MiB, the most a params file may hold"):
        load_params(big)


@pytest.mark.parametrize("text", [
    "a: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "a: " + "{b: " * 50_000 + "1" + "}" * 50_000 + "\n",
    "".join("  " * i + "k:\n" for i in range(40)) + "  " * 40 + "k: 1\n",
])
def test_nesting_past_the_depth_limit_is_one_line_not_a_recursion_error(tmp_path: Path, text: str) -> None:
    deep = tmp_path / "params.yaml"
    deep.write_text(text)
    with pytest.raises(ConfigError, match=r"params\.yaml: nested deeper than 32 levels at line \d+$"):
        load_params(deep)


def test_a_named_pipe_as_params_file_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "params.yaml")
    with pytest.raises(ConfigError, match="is a named pipe"):
        load_params(tmp_path / "params.yaml")


@pytest.mark.parametrize(("section", "message"), [
    ({"data": {"dataset": "local", "path": "data/raw/corpus.jsonl"}},
     "data.path: 'data/raw/corpus.jsonl' is inside paths.raw ('data/raw'), a folder the pipeline replaces"),
    ({"data": {"dataset": "local", "path": "models"}}, "data.path: 'models' is paths.models"),
    ({"data": {"dataset": "local", "path": "data"}}, "data.path: 'data' holds paths.raw ('data/raw')"),
    ({"crosseval": {"data": {"dataset": "local", "path": "predictions/x.jsonl"}}},
     "crosseval.data.path: 'predictions/x.jsonl' is inside paths.predictions"),
    ({"pretrain": {"init_from": "pretrain/bert-base"}},
     "pretrain.init_from: 'pretrain/bert-base' is inside paths.pretrain ('pretrain')"),
    ({"pretrain": {"init_from": "checkpoints/../pretrain/bert"}}, "pretrain.init_from"),  # normalised first
])
def test_an_input_inside_an_output_folder_is_refused(section: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        params_from_dict(section)
    assert message in str(info.value)


@pytest.mark.parametrize(("paths", "message"), [
    ({"dvclive": "models/curves"},
     "paths.dvclive: 'models/curves' is inside paths.models ('models'): a stage would overwrite its input"),
    ({"timings": "dvclive/t"}, "paths.timings: 'dvclive/t' is inside paths.dvclive ('dvclive')"),
    ({"dvclive": " "}, "paths.dvclive: must not be empty"),
    ({"dvclive": 3}, "paths.dvclive: expected str, got 3"),
])
def test_the_training_curves_folder_is_checked_like_every_path(paths: dict, message: str) -> None:
    """paths.dvclive (each run's DVCLive folder, sumpipe.train.live), default `dvclive`."""
    assert params_from_dict({}).paths.dvclive == "dvclive"
    with pytest.raises(ConfigError) as info:
        params_from_dict({"paths": paths})
    assert message in str(info.value)


def test_inputs_beside_the_outputs_are_fine() -> None:
    params = params_from_dict({"data": {"dataset": "local", "path": "corpora/cnndm.jsonl"},
                               "pretrain": {"init_from": "../bert-base-uncased"}})
    assert params.inputs() == {"data.path": "corpora/cnndm.jsonl", "pretrain.init_from": "../bert-base-uncased"}


# --------------------------------------------------------------------------------------------
# A model's own seeds, and `runs:` (dvc.yaml's train/decode stages) that must match them
# --------------------------------------------------------------------------------------------
def test_the_default_run_trains_three_seeds_of_m1_m2_and_pg_cov(repo_root: Path) -> None:
    params = load_params(repo_root / "params.yaml")
    seeds = params.seeds_by_model()
    assert seeds["M1"] == seeds["M2"] == seeds["PG-cov"] == [1, 2, 3]
    assert seeds["BERT2S"] == [1]
    assert list(params.runs) == ["M1-1", "M1-2", "M1-3", "M2-1", "M2-2", "M2-3", "PG-cov-1", "PG-cov-2", "PG-cov-3",
                                 "BERT2S-1"]
    assert params.runs["PG-cov-2"] == Run("PG-cov", 2)


def _with_runs(models: dict, runs: dict) -> dict:
    return {"train": {"seeds": [1, 2]}, "models": models, "runs": runs}


@pytest.mark.parametrize(("data", "message"), [
    (_with_runs({"M1": {}, "B": {"seeds": [1]}},
                {"M1-1": {"model": "M1", "seed": 1}, "B-1": {"model": "B", "seed": 1}}),
     "runs: misses M1-2: add `M1-2: {model: M1, seed: 2}` (models.M1 trains seed 2)"),
    (_with_runs({"B": {"seeds": [1]}}, {"B-1": {"model": "B", "seed": 1}, "B-2": {"model": "B", "seed": 2}}),
     "runs.B-2: seed 2 is not among B's seeds (1)"),
    (_with_runs({"B": {"seeds": [1]}}, {"B1": {"model": "B", "seed": 1}}),
     "runs.B1: name it B-1 (its model and seed)"),
    (_with_runs({"B": {"seeds": [1]}}, {"C-1": {"model": "C", "seed": 1}}),
     "runs.C-1.model: no model 'C' in models:"),
    ({"models": {"B": {"seeds": [1]}}}, "models.B.seeds: a model's own seeds need `runs:`"),
    ({"models": {"B": {"seeds": []}}}, "models.B.seeds: needs at least one seed (or leave it out: train.seeds)"),
    ({"models": {"B": {"seeds": [2, 2]}}}, "models.B.seeds: lists a seed twice"),
])
def test_runs_must_be_every_model_with_each_of_its_seeds(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        params_from_dict(data)
    assert str(info.value) == message or str(info.value).startswith(message)


def test_a_model_without_seeds_of_its_own_trains_train_seeds() -> None:
    params = params_from_dict(_with_runs({"A": {}, "B": {"seeds": [5]}}, {
        "A-1": {"model": "A", "seed": 1}, "A-2": {"model": "A", "seed": 2}, "B-5": {"model": "B", "seed": 5}}))
    assert params.seeds_by_model() == {"A": [1, 2], "B": [5]}
    assert params_from_dict({"models": {"A": {}}}).seeds_of("A") == [1, 2, 3]  # no runs: the matrix of train.seeds


# --------------------------------------------------------------------------------------------
# `ensembles:`, a model's seeds decoded as one system
# --------------------------------------------------------------------------------------------
def _ensembles(ensembles: dict) -> dict:
    return {"train": {"seeds": [1, 2, 3]}, "models": {"A": {}}, "ensembles": ensembles}


def test_an_ensemble_takes_its_model_s_seeds_or_a_subset() -> None:
    params = params_from_dict(_ensembles({"A-ens": {"model": "A"}, "A-pair": {"model": "A", "seeds": [3, 1]}}))
    assert params.ensemble_seeds("A-ens") == [1, 2, 3] and params.ensemble_seeds("A-pair") == [1, 3]


def test_the_default_run_ensembles_every_seed_of_m1_m2_and_pg_cov(repo_root: Path) -> None:
    params = load_params(repo_root / "params.yaml")
    assert {name: spec.model for name, spec in params.ensembles.items()} == {
        "M1-ens": "M1", "M2-ens": "M2", "PG-cov-ens": "PG-cov"}
    assert params.ensemble_seeds("PG-cov-ens") == [1, 2, 3]


@pytest.mark.parametrize(("ensembles", "message"), [
    ({"E": {"model": "B"}}, "ensembles.E.model: no model 'B' in models:"),
    ({"E": {"model": "A", "seeds": [1, 4]}}, "ensembles.E.seeds: seed 4 is not among A's seeds (1, 2, 3)"),
    ({"E": {"model": "A", "seeds": [2]}}, "ensembles.E.seeds: an ensemble needs at least 2 seeds; it lists 1"),
    ({"E": {"model": "A", "seeds": [2, 2]}}, "ensembles.E.seeds: lists a seed twice"),
    ({"E": {"model": "A", "seeds": []}}, "ensembles.E.seeds: needs at least one seed (or leave it out: every seed"),
    ({"A": {"model": "A"}}, "ensembles.A: is already a system's name"),
    ({"lead": {"model": "A"}}, "ensembles.lead: is already a system's name"),
    ({"lead3": {"model": "A"}}, "ensembles.lead3: is already a system's name"),
    ({"E": {"model": "A", "beam": 4}}, "ensembles.E.beam: unknown key"),
    ({"E": {}}, "ensembles.E.model"),
])
def test_bad_ensembles_name_the_key(ensembles: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        params_from_dict(_ensembles(ensembles))
    assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize(("crosseval", "message"), [
    ({"ensembles": ["B-ens"]}, "crosseval.ensembles[0]: no ensemble 'B-ens' in ensembles: (known: A-ens)"),
    ({"ensembles": ["A-ens", "A-ens"]}, "crosseval.ensembles: lists an ensemble twice"),
    ({"ensembles": ["../A"]}, "crosseval.ensembles[0]: "),
])
def test_crosseval_tests_ensembles_of_the_ensembles_section(crosseval: dict, message: str) -> None:
    assert params_from_dict(_ensembles({"A-ens": {"model": "A"}})).crosseval.ensembles == []  # none by default
    ok = params_from_dict({**_ensembles({"A-ens": {"model": "A"}}), "crosseval": {"ensembles": ["A-ens"]}})
    assert ok.crosseval.ensembles == ["A-ens"]
    with pytest.raises(ConfigError) as info:
        params_from_dict({**_ensembles({"A-ens": {"model": "A"}}), "crosseval": crosseval})
    assert str(info.value).startswith(message) and "\n" not in str(info.value), str(info.value)


def test_an_ensemble_of_a_one_seed_model_is_refused() -> None:
    data = {"train": {"seeds": [1, 2]}, "models": {"B": {"seeds": [1]}}, "runs": {"B-1": {"model": "B", "seed": 1}},
            "ensembles": {"E": {"model": "B"}}}
    with pytest.raises(ConfigError, match=r"^ensembles.E.model: an ensemble needs at least 2 seeds; B trains 1$"):
        params_from_dict(data)


def test_a_params_integer_too_long_to_read_is_one_line_naming_the_line(tmp_path: Path) -> None:
    """A 5,000-digit integer in params.yaml was a ValueError traceback (int()'s limit is 4,300 digits)."""
    from sumpipe.config import read_params_yaml

    path = tmp_path / "params.yaml"
    path.write_text("data:\n  seed: " + "9" * 5000 + "\n")
    for read in (load_params, read_params_yaml):
        with pytest.raises(ConfigError) as refused:
            read(path)
        assert str(refused.value) == f"{path}: line 2: a number of 5,000 digits, too large to read (at most 308)"
    path.write_text("train:\n  seeds: [" + "9" * 300 + "]\n")  # readable: then the key's own check speaks
    with pytest.raises(ConfigError, match=r"train.seeds\[0\]: must be in \[0, "):
        load_params(path)


@pytest.mark.parametrize("value", [-0.5, 20.5])
def test_novel_bigram_penalty_must_be_in_range(value: float) -> None:
    DecodeConfig(novel_bigram_penalty=20.0).check("decode")
    with pytest.raises(ConfigError, match=r"^decode.novel_bigram_penalty: must be in \[0, 20\]"):
        DecodeConfig(novel_bigram_penalty=value).check("decode")


def test_banned_words_must_be_a_regular_expression() -> None:
    DecodeConfig(banned_words="unk|#+").check("decode")
    with pytest.raises(ConfigError, match=r"^decode.banned_words: not a regular expression"):
        DecodeConfig(banned_words="unk|(#").check("decode")
