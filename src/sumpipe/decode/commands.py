"""`sumpipe decode`: the DVC stage (no INPUT) or summaries of raw text (INPUT file or `-`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer

from sumpipe.errors import SumpipeError
from sumpipe.options import Command, ParamsOption, flag

DEFAULT_PARAMS = Path("params.yaml")


def _load_params(params: Path, input_mode: bool):
    """params.yaml; in INPUT mode a missing *default* params file means built-in defaults, so the
    command works from any folder with `--model DIR`."""
    from sumpipe.config import Params, load_params

    if input_mode and params == DEFAULT_PARAMS and not params.is_file():
        return Params()
    return load_params(params)


def decode(
    input: Annotated[str | None, typer.Argument(
        help="raw text file to summarise, or - for stdin; without it, run the DVC decode stage",
        show_default=False)] = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m",
        help="model name under models/ or a model directory (default: best rougeL in metrics/rouge.json, else M1)",
    )] = None,
    beam: Annotated[int | None, typer.Option("--beam", "-b", help="beam size (default: decode.beam_size)")] = None,
    greedy: Annotated[bool, flag("--greedy", help="greedy decoding")] = False,
    sample: Annotated[bool, flag("--sample", help="top-k / top-p sampling")] = False,
    top_k: Annotated[int | None, typer.Option("--top-k", help="sampling: keep the k best words (0 = all)")] = None,
    top_p: Annotated[float | None, typer.Option("--top-p", help="sampling: nucleus probability mass")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", help="sampling temperature")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="sampling seed")] = None,
    min_length: Annotated[int | None, typer.Option("--min-length", help="fewest words")] = None,
    max_length: Annotated[int | None, typer.Option(
        "--max-length", help="most words (default: by data set, e.g. CNN/DM 120)")] = None,
    length_penalty: Annotated[float | None, typer.Option("--length-penalty", help="GNMT alpha")] = None,
    block_ngram: Annotated[int | None, typer.Option(
        "--block-ngram", help="never repeat an n-gram of this size (0 = off)")] = None,
    per_line: Annotated[bool, flag("--per-line", help="one document per line")] = False,
    per_block: Annotated[bool, flag("--per-block", help="one document per blank-line-separated block")] = False,
    as_json: Annotated[bool, flag("--json", help="JSON Lines with tokens, score, p_gen and attention")] = False,
    as_tokens: Annotated[bool, flag(
        "--tokens",
        help="print the pipeline's tokenized form (lowercased, space-separated; what ROUGE scores)")] = False,
    params: ParamsOption = DEFAULT_PARAMS,
) -> None:
    """Summarise raw text with a trained model (INPUT), or run the decode stage (no INPUT)."""
    options: dict[str, float | int | None] = {
        "beam_size": beam, "top_k": top_k, "top_p": top_p, "temperature": temperature, "seed": seed,
        "min_length": min_length, "max_length": max_length, "length_penalty": length_penalty,
        "block_ngram_repeat": block_ngram,
    }
    # DecodeConfig overrides: the numeric options given, plus the strategy they imply
    overrides: dict[str, float | int | str] = {k: v for k, v in options.items() if v is not None}
    if greedy and sample:
        raise SumpipeError("--greedy and --sample exclude each other")
    if per_line and per_block:
        raise SumpipeError("--per-line and --per-block exclude each other")
    if greedy or sample:
        overrides["strategy"] = "greedy" if greedy else "sample"
    elif "beam_size" in overrides:
        overrides["strategy"] = "beam"

    if input is None:
        if overrides or per_line or per_block or as_json or as_tokens:
            raise SumpipeError("decoding options apply to an INPUT file; the stage reads `decode:` in params.yaml")
        _run_stage(params, model)
        return
    _run_input(input, params, model, overrides, per_line, per_block, as_json, as_tokens)


# DecodeConfig field -> the option that sets it, so an out-of-range value is reported as typed
OPTION_NAMES = {
    "beam_size": "--beam", "top_k": "--top-k", "top_p": "--top-p", "temperature": "--temperature",
    "seed": "--seed", "min_length": "--min-length", "max_length": "--max-length",
    "length_penalty": "--length-penalty", "block_ngram_repeat": "--block-ngram",
}


def _decode_config(base, overrides: dict):
    """`decode:` of params.yaml with the command-line overrides, validated by DecodeConfig.check;
    a bad option value is a one-line error naming the option (`--beam: must be >= 1`)."""
    from sumpipe.config import DecodeConfig
    from sumpipe.errors import ConfigError
    from sumpipe.validation import from_dict

    try:
        return from_dict(DecodeConfig, {**dataclasses.asdict(base), **overrides}, "")
    except ConfigError as exc:
        key, _, why = str(exc).partition(": ")
        if key in overrides:
            for field, option in OPTION_NAMES.items():
                why = why.replace(field, option)
            raise SumpipeError(f"{OPTION_NAMES[key]}: {why}") from None
        raise ConfigError(f"decode.{exc}") from None


def _run_input(input: str, params: Path, model: str | None, overrides: dict, per_line: bool,
               per_block: bool, as_json: bool, as_tokens: bool) -> None:
    from sumpipe.decode.api import MAX_RAW_CHARS
    from sumpipe.decode.interactive import (
        MAX_STREAM_BYTES,
        find_model_dir,
        model_note,
        read_input,
        split_documents,
        summarize_input,
    )

    single = not (per_line or per_block)
    text = read_input(input, limit_bytes=4 * MAX_RAW_CHARS if single else None,
                      max_bytes=None if single else MAX_STREAM_BYTES)
    documents = split_documents(text, per_line, per_block)
    if not documents:
        raise SumpipeError(f"{'stdin' if input == '-' else input}: is empty")
    p = _load_params(params, input_mode=True)
    cfg = _decode_config(p.decode, overrides)
    metrics_file = Path(p.paths.metrics) / "rouge.json"
    model_dir = find_model_dir(model, Path(p.paths.models), metrics_file, list(p.models))
    summarize_input(documents, model_dir, cfg, Path(p.paths.vocab), as_json, one_line=per_line,
                    echo=typer.echo, warn=lambda m: typer.echo(m, err=True), as_tokens=as_tokens,
                    note=model_note(model_dir, Path(p.paths.models), metrics_file))


def _run_stage(params: Path, model: str | None) -> None:
    from sumpipe.decode.attention import ReportExamples
    from sumpipe.decode.interactive import trained_models
    from sumpipe.decode.stage import decode_stage

    p = _load_params(params, input_mode=False)
    root = Path(p.paths.models)
    if model is not None:
        if model not in p.models:
            raise SumpipeError(f"unknown model {model!r}; params.yaml `models:` has {', '.join(p.models) or 'none'}")
        names = [model]
    else:
        names = [n for n in trained_models(root, list(p.models)) if n in p.models]
        if not names:
            raise SumpipeError(f"no trained models in {root}/ (run `dvc repro` first)")
    examples = ReportExamples(p.report.n_samples, p.report.n_heatmaps, p.evaluate.seed)  # their heat maps
    for name in names:
        result = decode_stage(root / name, p.paths.extracted, Path(p.paths.predictions) / name, p.decode,
                              timings_dir=p.paths.timings, report_examples=examples)
        rate = result.n_documents / result.seconds if result.seconds > 0 else float("inf")
        typer.echo(f"decode {name}: {result.n_documents} summaries -> {result.path} "
                   f"({result.seconds:.1f} s, {rate:.1f} docs/s, max {result.max_length} words)")


METHOD_HELP = "extractive method"


class SummarizeCommand(Command):
    """`sumpipe summarize`'s command: its --help lists every extractive method of the registry
    (`sumpipe.extractive.scorers.SCORERS`), imported only when the help is shown."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from typer.core import TyperOption

        from sumpipe.extractive.scorers import all_scorers

        names = [f"{n} (reads the reference: refused)" if cls.uses_reference else n for n, cls in all_scorers().items()]
        for param in self.params:
            if param.name == "method" and isinstance(param, TyperOption):  # --method: an option, with a help
                param.help = f"{METHOD_HELP}: {', '.join(names)}"
        super().format_help(ctx, formatter)


def summarize(
    input: Annotated[str, typer.Argument(help="a text file, or - for stdin")],
    method: Annotated[str, typer.Option("--method", help=METHOD_HELP)] = "textrank",
    sentences: Annotated[int | None, typer.Option("--sentences", min=1, help="summary sentences")] = 3,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=1, help="at most this many tokens")] = None,
    as_tokens: Annotated[bool, flag(
        "--tokens", help="print the pipeline's tokenized form (lowercased, one sentence a line) instead of "
                         "the input's own sentences")] = False,
    params: ParamsOption = Path("params.yaml"),
) -> None:
    """Summarize raw text with an extractive method (same preprocessing as the pipeline; corpus
    statistics from the last `dvc repro` when present, else from the input alone)."""
    from sumpipe.decode.extractive import summarize_text
    from sumpipe.terminal import printable

    # the input's own sentences: a text from anywhere, so control sequences in it are escaped
    summary = summarize_text(input, method, sentences, max_tokens, params, as_tokens=as_tokens,
                             warn=lambda note: typer.echo(printable(note), err=True))
    typer.echo(printable(summary, lines=True))
