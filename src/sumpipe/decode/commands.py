"""`sumpipe decode`: a run's or an ensemble's predictions (no INPUT) or summaries of raw text (INPUT file or `-`);
`sumpipe predict`: the DVC stage, every summarizer's predictions side by side (`sumpipe.decode.pool`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sumpipe.errors import SumpipeError
from sumpipe.options import Command, ParamsOption, flag
from sumpipe.terminal import echo

DEFAULT_PARAMS = Path("params.yaml")


def decode(
    input: Annotated[str | None, typer.Argument(
        help="raw text file to summarise, or - for stdin; without it, run the DVC decode stage",
        show_default=False)] = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m",
        help="model name under models/, a model directory, or an ensemble of params.yaml's `ensembles:` "
             "(default: best rougeL in metrics/rouge.json, else M1)",
    )] = None,
    beam: Annotated[int | None, typer.Option("--beam", "-b", help="beam size (default: decode.beam_size)")] = None,
    greedy: Annotated[bool, flag("--greedy", help="greedy decoding")] = False,
    sample: Annotated[bool, flag("--sample", help="top-k / top-p sampling")] = False,
    top_k: Annotated[int | None, typer.Option("--top-k", help="sampling: keep the k best words (0 = all)")] = None,
    top_p: Annotated[float | None, typer.Option("--top-p", help="sampling: nucleus probability mass")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", help="sampling temperature")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="sampling seed")] = None,
    train_seed: Annotated[str | None, typer.Option(
        "--train-seed", help="which training seed's weights (default: the seed with the lowest validation "
                             "loss; the stage: each of train.seeds); a comma list (1,2): those seeds as one "
                             "ensemble")] = None,
    ensemble: Annotated[bool, flag(
        "--ensemble", help="every trained seed of the model as one summarizer (each step's distributions "
                           "averaged, one beam search)")] = False,
    min_length: Annotated[int | None, typer.Option("--min-length", help="fewest words")] = None,
    max_length: Annotated[int | None, typer.Option(
        "--max-length", help="most words (default: by data set, e.g. CNN/DM 120)")] = None,
    length_penalty: Annotated[float | None, typer.Option("--length-penalty", help="GNMT alpha")] = None,
    length: Annotated[int | None, typer.Option(
        "--length", help="the summary's length budget in --unit, for a model trained with length control "
                         "(default: decode.target_length), e.g. --length 75 --unit bytes (DUC)")] = None,
    unit: Annotated[str | None, typer.Option(
        "--unit", help="words or bytes (of the summary text); the model's own (default: decode.length_unit)")] = None,
    block_ngram: Annotated[int | None, typer.Option(
        "--block-ngram", help="never repeat an n-gram of this size (0 = off)")] = None,
    repeat_stop_words: Annotated[bool | None, flag(
        "--repeat-stop-words/--block-stop-words",
        help="--block-ngram exempts n-grams of stop words only (default: decode.repeat_stop_words)")] = None,
    block_adjacent: Annotated[bool | None, flag(
        "--block-adjacent/--no-block-adjacent",
        help="never the same token twice in a row (default: decode.block_adjacent_repeat)")] = None,
    novel_bigram_penalty: Annotated[float | None, typer.Option(
        "--novel-bigram-penalty",
        help="log-probability each word pays that makes a pair the input never writes (0 = off; default: "
             "decode.novel_bigram_penalty)")] = None,
    known_words: Annotated[bool | None, flag(
        "--known-words/--any-words",
        help="a subword model (BERT2S) writes only words of its training text or the input "
             "(default: decode.known_words)")] = None,
    per_line: Annotated[bool, flag("--per-line", help="one document per line")] = False,
    per_block: Annotated[bool, flag("--per-block", help="one document per blank-line-separated block")] = False,
    as_json: Annotated[bool, flag("--json", help="JSON Lines with tokens, score, p_gen and attention")] = False,
    as_tokens: Annotated[bool, flag(
        "--tokens",
        help="print the pipeline's tokenized form (lowercased, space-separated; what ROUGE scores)")] = False,
    project: Annotated[str | None, typer.Option(
        "--project", help="the folder `dvc repro` ran in, whose models/ and params.yaml answer (default: the "
                          "current one), e.g. experiments/cnn; INPUT only")] = None,
    params: ParamsOption = DEFAULT_PARAMS,
) -> None:
    """Summarise raw text with a trained model (INPUT), or run the decode stage (no INPUT; `--model` may
    name an entry of params.yaml's `ensembles:`)."""
    # the public API's decoding keywords (`sumpipe.decode.summarizer`), spelled as options in errors
    options: dict[str, Any] = {
        "beam": beam, "greedy": greedy, "sample": sample, "top_k": top_k, "top_p": top_p,
        "temperature": temperature, "seed": seed, "min_length": min_length, "max_length": max_length,
        "length_penalty": length_penalty, "block_ngram": block_ngram, "block_adjacent": block_adjacent,
        "length": length, "unit": unit, "known_words": known_words, "repeat_stop_words": repeat_stop_words,
        "novel_bigram_penalty": novel_bigram_penalty,
    }
    # greedy/sample are flags (False: not given); --no-block-adjacent is a given False
    given = {k: v for k, v in options.items() if v is not None and not (k in ("greedy", "sample") and v is False)}
    if greedy and sample:
        raise SumpipeError("--greedy and --sample exclude each other")
    if per_line and per_block:
        raise SumpipeError("--per-line and --per-block exclude each other")
    seeds = parse_seeds(train_seed)
    if input is None:
        if given or per_line or per_block or as_json or as_tokens:
            raise SumpipeError("decoding options apply to an INPUT file; the stage reads `decode:` in params.yaml")
        if project is not None:
            raise SumpipeError("--project applies to an INPUT file; run the stage in its folder (`dvc repro`)")
        if ensemble or (seeds is not None and len(seeds) > 1):
            raise SumpipeError("the stage decodes an ensemble named in params.yaml's `ensembles:` (`--model NAME`); "
                               "--ensemble and a list of --train-seed apply to an INPUT file")
        _run_stage(params, model, None if seeds is None else seeds[0])
        return
    _run_input(input, params, project, model, seeds, ensemble, given, per_line, per_block, as_json, as_tokens)


def parse_seeds(text: str | None) -> list[int] | None:
    """--train-seed's value: one seed ("2") or a comma list ("1,2"); a one-line error otherwise."""
    if text is None:
        return None
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise SumpipeError(f"--train-seed {text!r}: give a training seed or a comma list of them, e.g. 1,2")
    seeds = [int(part) for part in parts]
    if len(set(seeds)) != len(seeds):
        raise SumpipeError(f"--train-seed {text!r}: lists a seed twice")
    return seeds


def _option_name(keyword: str) -> str:
    """The command's spelling of a summarize() keyword: `top_k` -> `--top-k`."""
    return "--" + keyword.replace("_", "-")


def _run_input(input: str, params: Path, project_dir: str | None, model: str | None, seeds: list[int] | None,
               ensemble: bool, options: dict, per_line: bool, per_block: bool, as_json: bool, as_tokens: bool) -> None:
    from sumpipe.decode.batches import MAX_RAW_CHARS
    from sumpipe.decode.interactive import (
        MAX_STREAM_BYTES,
        model_note,
        read_input,
        split_documents,
        summarize_input,
    )
    from sumpipe.decode.summarizer import Summarizer, decode_config, open_project

    if project_dir is not None and not Path(project_dir).is_dir():
        raise SumpipeError(f"--project {project_dir}: no such folder (give the folder `dvc repro` ran in)")
    single = not (per_line or per_block)
    text = read_input(input, limit_bytes=4 * MAX_RAW_CHARS if single else None,
                      max_bytes=None if single else MAX_STREAM_BYTES)
    documents = split_documents(text, per_line, per_block)
    if not documents:
        raise SumpipeError(f"{'stdin' if input == '-' else input}: is empty")
    # without --params, the project's params.yaml; a folder without one means built-in defaults (`--model DIR`
    # from anywhere). --project as the API's `project=`: its paths (models/, metrics/) are relative to it
    project = open_project("." if project_dir is None else project_dir, None if params == DEFAULT_PARAMS else params)
    decode_config(project.params.decode, options, _option_name)  # a bad option: one line, before any work
    if ensemble and seeds is not None and len(seeds) == 1:
        raise SumpipeError(f"--ensemble and --train-seed {seeds[0]}: an ensemble of one seed is that seed; "
                           "give a list (--train-seed 1,2) or leave one out")
    if ensemble or (seeds is not None and len(seeds) > 1):
        summarizer = Summarizer.open(project, model, seeds=seeds, ensemble=True)
    else:
        summarizer = Summarizer.open(project, model, seed=None if seeds is None else seeds[0])
    note = model_note(summarizer.model_dir, project.models_root, project.metrics_file,
                      seed_given=seeds is not None, members=summarizer.members)
    summarize_input(documents, summarizer, options, as_json, one_line=per_line, echo=typer.echo,
                    warn=lambda m: echo(m, err=True), as_tokens=as_tokens, note=note)


def _run_stage(params: Path, model: str | None, train_seed: int | None) -> None:
    """The decode stage: `models/<model>/seed-<s>/` -> `predictions/<model>/seed-<s>/`, for the model and
    seed given, else for every trained seed of every model of params.yaml; an ensemble of `ensembles:`
    (`--model NAME`) -> `predictions/<NAME>/` (without --model: every ensemble whose seeds are trained)."""
    from sumpipe.config import load_params
    from sumpipe.numerics import pin_numerics

    p = load_params(params)
    pin_numerics(p.train.numerics)  # before torch loads (the next imports)
    from sumpipe.decode.attention import ReportExamples
    from sumpipe.decode.stage import decode_stage
    from sumpipe.names import seed_folder

    root = Path(p.paths.models)
    if model is not None and model in p.ensembles:
        if train_seed is not None:
            raise SumpipeError(f"--train-seed: {model} is an ensemble (ensembles.{model}); its seeds are params.yaml's")
        _run_ensemble(p, model)
        return
    if model is not None and model not in p.models:
        known = ", ".join([*p.models, *p.ensembles]) or "none"
        raise SumpipeError(f"unknown model {model!r}; params.yaml `models:` and `ensembles:` have {known}")
    names = [model] if model is not None else list(p.models)
    if train_seed is not None and model is not None and train_seed not in p.seeds_of(model):
        raise SumpipeError(f"--train-seed {train_seed}: not among {model}'s seeds "
                           f"({', '.join(map(str, p.seeds_of(model)))})")
    runs = [(name, seed) for name in names for seed in p.seeds_of(name)
            if train_seed is None or seed == train_seed]
    if model is None or train_seed is None:  # several runs: those trained so far (a damaged one is tried, and said)
        runs = [(name, seed) for name, seed in runs if (root / name / seed_folder(seed)).is_dir()]
        if not runs:
            raise SumpipeError(f"no trained models in {root}/ (run `dvc repro` first)")
    examples = ReportExamples(p.report.n_samples, p.report.n_heatmaps, p.evaluate.seed)  # their heat maps
    for name, seed in runs:
        run = Path(name) / seed_folder(seed)
        result = decode_stage(root / run, p.paths.extracted, Path(p.paths.predictions) / run, p.decode,
                              timings_dir=p.paths.timings, report_examples=examples)
        _echo_result(str(run), result)
    if model is None:  # every ensemble whose seeds are all trained
        for name, spec in p.ensembles.items():
            if all((root / spec.model / seed_folder(seed)).is_dir() for seed in p.ensemble_seeds(name)):
                _run_ensemble(p, name)


def _run_ensemble(p: Any, name: str) -> None:
    """The seeds of `ensembles.<name>` decoded as one -> `predictions/<name>/` (a job of the predict stage)."""
    from sumpipe.decode.stage import decode_ensemble_stage
    from sumpipe.names import seed_folder

    spec = p.ensembles[name]
    members = [Path(p.paths.models) / spec.model / seed_folder(seed) for seed in p.ensemble_seeds(name)]
    result = decode_ensemble_stage(members, name, p.paths.extracted, Path(p.paths.predictions) / name, p.decode,
                                   timings_dir=p.paths.timings)
    _echo_result(f"{name} (ensemble of {spec.model} seeds {', '.join(map(str, p.ensemble_seeds(name)))})", result)


def _echo_result(label: str, result: Any) -> None:
    rate = result.n_documents / result.seconds if result.seconds > 0 else float("inf")
    echo(f"decode {label}: {result.n_documents} summaries -> {result.path} "
               f"({result.seconds:.1f} s, {rate:.1f} docs/s, max {result.max_length} words)")


def predict(
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, help="summarizers run side by side (default: decode.workers; null there: the "
                                 "cores divided by decode.threads)")] = None,
    params: ParamsOption = DEFAULT_PARAMS,
) -> None:
    """The predict stage: every extractive system, training run and ensemble of params.yaml summarises the
    decode split into predictions/<name>/, side by side, each in a process of its own."""
    import time

    from sumpipe.config import load_params
    from sumpipe.decode.pool import plan_jobs, run_jobs, worker_count
    from sumpipe.names import seed_folder
    from sumpipe.timings import record_run
    from sumpipe.train.pool import available_cores

    p = load_params(params)
    for name, run in p.runs.items():  # every model trained, before any job starts
        folder = Path(p.paths.models) / run.model / seed_folder(run.seed)
        if not folder.is_dir():
            raise SumpipeError(f"{folder}: run {name} is not trained (`dvc repro train`, or `sumpipe train "
                               f"--model {run.model} --seed {run.seed}`)")
    jobs = plan_jobs(p)
    if not jobs:
        raise SumpipeError("nothing to predict: extractive.systems, runs and ensembles are all empty")
    count = worker_count(workers if workers is not None else p.decode.workers, p.decode.threads, len(jobs))
    started = time.monotonic()
    seconds = run_jobs(params, jobs, count)
    total = time.monotonic() - started
    record_run(p.paths.timings, "pool", "predict", {"workers": count, "cores": available_cores(),
                                                    "seconds": round(total, 2), "jobs": seconds})
    echo(f"predict: {len(jobs)} summarizers in {total:.1f} s ({count} side by side) -> {p.paths.predictions}/")


METHOD_HELP = "extractive method"


class SummarizeCommand(Command):
    """`sumpipe summarize`'s command: its --help lists every extractive method of the registry
    (`sumpipe.extractive.methods.METHODS`), imported only when the help is shown."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from typer.core import TyperOption

        from sumpipe.extractive.methods import all_methods

        names = [f"{n} (reads the reference: refused)" if cls.uses_reference else n for n, cls in all_methods().items()]
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
    params: ParamsOption = DEFAULT_PARAMS,
) -> None:
    """Summarize raw text with an extractive method (same preprocessing as the pipeline; corpus
    statistics from the last `dvc repro` when present, else from the input alone)."""
    from sumpipe.decode.extractive import summarize_text

    # the input's own sentences: a text from anywhere, so control sequences in it are escaped
    summary = summarize_text(input, method, sentences, max_tokens, None if params == DEFAULT_PARAMS else params,
                             as_tokens=as_tokens, warn=lambda note: echo(note, err=True))
    echo(summary, lines=True)
