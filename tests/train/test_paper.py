"""The paper configuration: params-paper.yaml is params.yaml + the documented overrides, and the
`dvc exp run -S` recipe produces the same parameters."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from sumpipe.config import load_params
from sumpipe.errors import ConfigError
from sumpipe.train.paper import (
    apply_overrides,
    exp_args,
    paper_overrides,
    paper_params,
    paper_yaml,
    validate_paper_params,
)


def test_params_paper_file_is_what_the_generator_writes(repo_root: Path) -> None:
    # One source: the committed file is byte for byte `python -m sumpipe.train.paper` on params.yaml, so
    # the file, the generator and the `--exp-args` route (next tests) give one configuration.
    written = paper_yaml(repo_root / "params.yaml")
    committed = (repo_root / "params-paper.yaml").read_text()
    assert committed == written, (
        "params-paper.yaml is not what its generator writes: `python -m sumpipe.train.paper > params-paper.yaml`")


def test_params_paper_file_holds_every_override(repo_root: Path) -> None:
    # A fixed point: applying the overrides to params-paper.yaml changes nothing.
    path = repo_root / "params-paper.yaml"
    assert paper_params(path) == yaml.safe_load(path.read_text()), (
        "params-paper.yaml lacks an override: regenerate it with `python -m sumpipe.train.paper > params-paper.yaml`")


def test_the_exp_args_route_gives_the_committed_file(repo_root: Path, tmp_path: Path) -> None:
    from dvc.utils.hydra import apply_overrides as dvc_apply  # what `dvc exp run -S` applies

    copy = tmp_path / "params.yaml"
    shutil.copy(repo_root / "params.yaml", copy)
    flags = exp_args(repo_root / "params.yaml")
    dvc_apply(copy, flags[1::2])
    assert yaml.safe_load(copy.read_text()) == yaml.safe_load((repo_root / "params-paper.yaml").read_text())


def test_decoding_and_training_follow_the_cited_sources(repo_root: Path) -> None:
    """docs/paper.md's trace: the values a source states, and the defaults no source has."""
    from sumpipe.train.stage import resolve_inputs

    params = load_params(repo_root / "params-paper.yaml")
    d = params.decode
    # beam 4 and at most 120 tokens (Morozovskii 2022 §5.2.2, Table 4.3); GNMT alpha 1 (Roy Choudhury 2020
    # §10.3); no n-gram blocking (the thesis names it only for Deaton et al., Table 5.26)
    assert (d.beam_size, d.length_penalty, d.max_length, d.min_length) == (4, 1.0, 120, 1)
    assert (d.block_ngram_repeat, d.block_adjacent_repeat, d.strategy) == (0, False, "beam")
    seed = params.train.run_seeds[0]
    pg = resolve_inputs(params, "PG-cov", seed).train
    # See et al. 2017 §5: Adagrad, lr 0.15, initial accumulator 0.1, batch 16, no regularisation
    assert (pg.optimizer, pg.lr, pg.adagrad_initial_accumulator, pg.batch_size) == ("adagrad", 0.15, 0.1, 16)
    assert (pg.label_smoothing, pg.ema_decay, pg.copy_target_weight, pg.copy_attention_weight) == (0.0, None, 1.0, 0.0)
    for name in params.models:  # no paper averages its weights
        assert resolve_inputs(params, name, seed).train.ema_decay is None, name
    m1 = resolve_inputs(params, "M1", seed).train
    assert (m1.epochs, m1.patience) == (5, None)  # "All models have been trained on 5 epochs"


def test_paper_values(repo_root: Path) -> None:
    from sumpipe.models.transformer import shared_arch

    params = load_params(repo_root / "params-paper.yaml")
    m = shared_arch(params)  # the `model:` section, validated by the transformer family
    assert (m.d_model, m.d_ff, m.n_layers, m.n_heads, m.dropout) == (256, 1024, 8, 8, 0.2)
    assert (m.vocab_size, m.max_source_tokens, m.max_summary_tokens) == (50000, 400, 100)
    from sumpipe.models.registry import resolve_model

    for name in ("M1-200", "M2-200"):
        _, _, arch = resolve_model(params, name)
        assert (arch.vocab_size, arch.max_source_tokens) == (25000, 200)
    t = params.train
    assert (t.optimizer, t.lr, t.adagrad_initial_accumulator, t.epochs) == ("adagrad", 0.15, 0.1, 5)
    assert (params.decode.beam_size, params.decode.max_length) == (4, 120)


def test_dvc_exp_run_flags_give_the_same_params(repo_root: Path, tmp_path: Path) -> None:
    from dvc.utils.hydra import apply_overrides  # what `dvc exp run -S` applies

    copy = tmp_path / "params.yaml"
    shutil.copy(repo_root / "params.yaml", copy)
    flags = exp_args(repo_root / "params.yaml")
    assert flags[::2] == ["-S"] * (len(flags) // 2)
    apply_overrides(copy, flags[1::2])
    assert yaml.safe_load(copy.read_text()) == paper_params(repo_root / "params.yaml")


def test_roy_choudhury_2020_values(repo_root: Path) -> None:
    from sumpipe.train.stage import resolve_inputs

    params = load_params(repo_root / "params-paper.yaml")
    e = params.pretrain.encoder
    assert (e.d_model, e.n_layers, e.n_heads, e.d_ff, e.dropout) == (768, 12, 12, 3072, 0.1)  # BERT-base
    assert params.subword.size == 30000
    inputs = resolve_inputs(params, "BERT2S", params.train.run_seeds[0])
    assert (inputs.arch.n_decoder_layers, inputs.arch.dropout, inputs.arch.encoder) == (12, 0.1, e)
    t = inputs.train
    assert (t.optimizer, t.batch_size, t.accumulate, t.epochs, t.label_smoothing) == ("adam", 2, 36, 4, 0.1)
    assert t.max_steps is None and inputs.arch.refine_positions is None  # every position, every update
    seed = params.train.run_seeds[0]
    assert resolve_inputs(params, "M1", seed).train.optimizer == "adagrad"  # the thesis models keep theirs
    assert params.decode.length_penalty == 1.0


def test_the_paper_tool_refuses_a_configuration_a_stage_would_refuse(repo_root: Path) -> None:
    base = yaml.safe_load((repo_root / "params.yaml").read_text())
    validate_paper_params(apply_overrides(base, paper_overrides(base)))  # the real one passes
    for key, message in (("model.n_heads", "model.n_heads: must divide d_model"),
                         ("families.rnn.hidden_dim", "families.rnn.hidden_dim: must be >= 1")):
        bad = apply_overrides(base, {**paper_overrides(base), key: 0 if "rnn" in key else 7})
        with pytest.raises(ConfigError, match=message):
            validate_paper_params(bad)


def _traced_keys(doc: str) -> set[str]:
    """The dotted keys docs/paper.md's trace names: the first cell of each row (`.lr` after
    `models.PG-cov.train.optimizer` is `models.PG-cov.train.lr`) and the bookkeeping list."""
    section = doc.split("## Where every value comes from", 1)[1].split("\n## ", 1)[0]
    keys: set[str] = set()
    for line in section.splitlines():
        cell = line.split("|")[1] if line.startswith("|") else line
        parent = ""
        for token in re.findall(r"`([^`]+)`", cell):
            if token.startswith(".") and parent:
                keys.add(parent + token)
            elif re.fullmatch(r"[\w-]+(\.[\w-]+)*", token):
                keys.add(token)
                parent = token.rsplit(".", 1)[0] if "." in token else ""
    return keys


def _leaves(data: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_every_key_that_differs_from_params_yaml_is_traced_in_docs_paper(repo_root: Path) -> None:
    base = _leaves(yaml.safe_load((repo_root / "params.yaml").read_text()))
    paper = _leaves(yaml.safe_load((repo_root / "params-paper.yaml").read_text()))
    traced = _traced_keys((repo_root / "docs" / "paper.md").read_text())
    differing = [k for k, v in paper.items() if base.get(k, object()) != v]
    missing = [k for k in differing if not any(k == t or k.startswith(t + ".") for t in traced)]
    assert not missing, f"docs/paper.md's trace has no row for {missing}"
