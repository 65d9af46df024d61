"""Bad params.yaml files: every stage validates params.yaml first, so one command stands for all
(`sumpipe decode` without INPUT, the decode stage). A params file that validates reaches the stage,
which then says there is no trained model: that is the "accepted" outcome here.
"""

from __future__ import annotations

import time

import pytest
import yaml

from tests.reliability.harness import REPO, check, run_inprocess

ACCEPTED = "error: no trained models"

# A billion-laughs alias bomb, written inline where a value is expected: 9 levels of 9 aliases,
# 9**9 (387 M) strings if expanded.
BOMB = "[" + ", ".join(['&l0 ["lol", "lol"]'] + [f"&l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]) + "]"


def _default() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())


def _with(section: str, key: str, value) -> str:
    params = _default()
    params[section][key] = value
    return yaml.safe_dump(params, sort_keys=False)


def _at(path: str, value) -> str:
    """The default params with the key at dotted `path` set to `value` (parents created)."""
    params = _default()
    *parents, leaf = path.split(".")
    node = params
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    return yaml.safe_dump(params, sort_keys=False)


def _without(*sections: str) -> str:
    params = _default()
    for section in sections:
        del params[section]
    return yaml.safe_dump(params, sort_keys=False)


def _bomb_at(path: str) -> str:
    """The bomb as the value of `path` (a.b.c)."""
    *parents, leaf = path.split(".")
    text, indent = "", ""
    for part in parents:
        text += f"{indent}{part}:\n"
        indent += "  "
    return text + f"{indent}{leaf}: {BOMB}\n"


CASES = {
    "wrong type (vocab.size: big)": (_with("vocab", "size", "big"), "error: vocab.size: expected int, got 'big'"),
    "float for int (vocab.size: 1.5)": (_with("vocab", "size", 1.5), "error: vocab.size: expected int"),
    "bool for int (vocab.size: true)": (_with("vocab", "size", True), "error: vocab.size: expected int"),
    "negative size (vocab.size: -5)": (_with("vocab", "size", -5), "error: vocab.size"),
    # `model:` (like `families.<name>`) is validated by its family, by the stage that builds the model
    "zero size (model.d_model: 0) (train)": (_with("model", "d_model", 0), "error: model.d_model",
                                             ["train", "--model", "M1"]),
    "zero batch (train.batch_size: 0)": (_with("train", "batch_size", 0), "error: train.batch_size"),
    "NaN rate (train.lr: .nan)": (_with("train", "lr", float("nan")), "error: train.lr"),
    "unknown top-level key": (_default() | {"modle": {}} and yaml.safe_dump(_default() | {"modle": {}}),
                              "error: modle: unknown key"),
    "unknown nested key": (_with("train", "lr_rate", 0.1), "error: train.lr_rate: unknown key"),
    "missing sections (all but paths)": (yaml.safe_dump({"paths": _default()["paths"]}), ACCEPTED),
    "missing models, runs and ensembles sections": (_without("models", "runs", "ensembles"), ACCEPTED),
    "missing models and runs sections, ensembles left": (
        _without("models", "runs"), "error: params.yaml: ensembles.M1-ens.model: no model 'M1' in models:"),
    "missing models section, runs left": (_without("models"),
                                          "error: params.yaml: runs.M1-1.model: no model 'M1' in models:"),
    "empty file": ("", ACCEPTED),
    "a list, not a mapping": ("- 1\n- 2\n", "error: expected a mapping"),
    "YAML syntax error": ("vocab:\n  size: [1, 2\n", "error: params.yaml: not valid YAML at line"),
    "duplicate key": ("vocab:\n  size: 10\nvocab:\n  size: 20\n", "error: params.yaml: duplicate key 'vocab'"),
    "non-UTF-8 bytes": (b"vocab:\n  size: \xff\xfe\n", "error: params.yaml: not UTF-8 text"),
    # a model's family and input are looked up by the stage that builds the model
    "unknown model family (train)": ("models:\n  X: {family: quantum, input: first400}\n", "error: models.X",
                                     ["train", "--model", "X"]),
    "model input not a selection (train)": ("models:\n  X: {family: transformer, input: tfidf900}\n",
                                            "error: models.X.input", ["train", "--model", "X"]),
    "billion laughs at an unknown key": (_bomb_at("surprise"), "error: surprise: unknown key"),
    "billion laughs in a list of str (download)": (_bomb_at("data.options.pydoc.packages"),
                                                   "error: data.options.pydoc.packages", ["download"]),
    "billion laughs in a mapping (download)": (_bomb_at("data.options.pydoc"), "error: data.options.pydoc",
                                                ["download"]),
    # --- every key checked, sizes bounded, options typed, paths and names checked
    "bootstrap_samples 200,000,000": (_with("evaluate", "bootstrap_samples", 200_000_000),
                                      "error: evaluate.bootstrap_samples: must be <= 100,000"),
    "encoder max_positions 10**9": (_at("pretrain.encoder.max_positions", 10**9),
                                    "error: pretrain.encoder.max_positions: must be <="),
    "model.d_model 65536 (train)": (_with("model", "d_model", 65536), "error: model.d_model: must be <=",
                                    ["train", "--model", "M1"]),
    "a model that cannot fit in RAM (train)": (_at("model", {**_default()["model"], "d_model": 8192, "d_ff": 65536,
                                                             "n_layers": 128, "n_heads": 8, "vocab_size": 2_000_000}),
                                               "error: model.d_model: the model has", ["train", "--model", "M1"]),
    "vocab.size 10**9": (_with("vocab", "size", 10**9), "error: vocab.size: must be <="),
    "decode.beam_size 10**7": (_with("decode", "beam_size", 10**7), "error: decode.beam_size: must be <="),
    "rnn hidden_dim 10**6 (train)": (_at("families.rnn.hidden_dim", 10**6), "error: families.rnn.hidden_dim",
                                     ["train", "--model", "PG-cov"]),
    "lexrank threshold abc": (_at("extractive.options.lexrank.threshold", "abc"),
                              "error: extractive.options.lexrank: extractive method 'lexrank': "
                              "bad option threshold: expected float, got 'abc'", ["extractive", "--system", "lexrank"]),
    "nmf topics -1": (_at("extractive.options.nmf.topics", -1),
                      "error: extractive.options.nmf: extractive method 'nmf': bad option topics: must be in [1, 1000]",
                      ["extractive", "--system", "nmf"]),
    "textrank damping abc": (_at("extractive.options.textrank", {"damping": "abc"}),
                             "error: extractive.options.textrank: extractive method 'textrank': "
                             "bad option damping: expected float", ["extractive", "--system", "textrank"]),
    "lsa dimensions -2": (_at("extractive.options.lsa.dimensions", -2),
                          "error: extractive.options.lsa: extractive method 'lsa': "
                          "bad option dimensions: must be in [0, 1000]",
                          ["extractive", "--system", "lsa"]),
    "lsa dimensions -2 in an extract budget": (
        _at("extract.budgets", [{"method": "lsa", "tokens": 30, "options": {"dimensions": -2}}]),
        "error: extract.budgets[0].options", ["extract"]),
    "paths.processed = paths.raw": (_at("paths.processed", "data/raw"),
                                    "error: paths.raw: 'data/raw' is the same folder as paths.processed"),
    "paths.models inside paths.raw": (_at("paths.models", "data/raw/models"),
                                      "error: paths.models: 'data/raw/models' is inside paths.raw"),
    "model name is a path (train)": (_at("models", {"../../../x/M1": {"family": "transformer", "input": "first400"}}),
                                     "error: models.../../../x/M1: '../../../x/M1' is not a name",
                                     ["train", "--model", "../../../x/M1"]),
    "model name '..'": (_at("models", {"..": {"family": "transformer", "input": "first400"}}),
                        "error: models...: '..' is not a name"),
    "crosseval model name is a path": (_at("crosseval.models", ["../M1"]),
                                       "error: crosseval.models[0]: '../M1' is not"),
}


@pytest.mark.parametrize(("content", "expected", "command"),
                         [pytest.param(*v, *([["decode"]] if len(v) == 2 else []), id=k) for k, v in CASES.items()])
def test_params_file(content, expected, command, tmp_path, monkeypatch, capsys) -> None:
    data = content if isinstance(content, bytes) else content.encode()
    (tmp_path / "params.yaml").write_bytes(data)
    start = time.perf_counter()
    result = run_inprocess([*command, "-p", "params.yaml"], tmp_path, monkeypatch, capsys, limit_s=60)
    seconds = time.perf_counter() - start
    check(result, expected)
    assert seconds < 10, f"took {seconds:.1f} s: validation must fail fast"
