"""The `decode` stage: a trained model's summaries of one split of its input selection.

    models/<name>/seed-<s>/              (model.safetensors, config.json naming its `input`)
    data/extracted/<input>/<split>.parquet   id, source, reference(, references)
        -> predictions/<name>/seed-<s>/<split>.parquet  id, prediction, reference(, references)
           predictions/<name>/seed-<s>/<split>.without-adjacent-block.parquet  with
                                                  `decode.block_adjacent_repeat`: the same summaries
                                                  decoded without that rule (the report shows both)
           predictions/<name>/seed-<s>/<split>.attention.parquet  the copy attention of the examples the
                                                  report draws heat maps for (`sumpipe.decode.attention`)

Documents are decoded in batches of similar length (`sumpipe.decode.batches.summarize`). Rows keep the
input order. A source left empty by the selection gets an empty prediction. The attention of the
report's examples (`ReportExamples`: `report.n_samples`, `report.n_heatmaps`, `evaluate.seed`) is
kept from the same decoding that writes the predictions: only the batches holding one record it.
The run's wall time goes to `<timings>/decode/<name>/seed-<s>.json` (`sumpipe.timings`), not into the
predictions: DVC hashes those, and a rerun that decodes the same summaries must leave dvc.lock
unchanged.

An ensemble of params.yaml's `ensembles:` (`decode_ensemble_stage`: a model's seeds decoded as one,
`sumpipe.decode.ensemble`) writes `predictions/<ensemble>/<split>.parquet` in the same format, and only
that: no summaries without the adjacent rule and no attention (the report's heat maps and the rule's
figures are the single models'); its timings go to `<timings>/decode/<ensemble>.json`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sumpipe.config import DecodeConfig
from sumpipe.decode.attention import ReportExamples, attention_path, attention_table
from sumpipe.errors import SumpipeError
from sumpipe.models.card import CARD_FILE
from sumpipe.names import folder_seed, without_rule_file
from sumpipe.schemas import EXTRACTED


@dataclass
class DecodeResult:
    path: Path
    n_documents: int
    seconds: float
    max_length: int


def decode_stage(
    model_dir: str | Path,
    extracted_dir: str | Path,
    predictions_dir: str | Path,
    cfg: DecodeConfig,
    timings_dir: str | Path | None = None,
    report_examples: ReportExamples | None = None,
) -> DecodeResult:
    """Write `predictions_dir/<cfg.split>.parquet` for the model in `model_dir` (module docstring), the
    attention of `report_examples`' heat-map examples beside it when given (else no attention file),
    and the run's figures to `<timings_dir>/decode/<model name>.json` when `timings_dir` is given."""
    from sumpipe.decode.batches import load_model
    from sumpipe.device import resolve_device

    model_dir = Path(model_dir)
    model, vocab, card = load_model(model_dir, device=resolve_device(cfg.device, "decode.device"))
    # the run's label: "M1/seed-2" for a seed folder of the train stage, else the folder's name
    run = f"{model_dir.parent.name}/{model_dir.name}" if folder_seed(model_dir.name) is not None else model_dir.name
    return _decode_split(model, vocab, card, model_dir, run, extracted_dir, predictions_dir, cfg, timings_dir,
                         report_examples, without_rule=True)


def decode_ensemble_stage(members: Sequence[Path], name: str, extracted_dir: str | Path, predictions_dir: str | Path,
                          cfg: DecodeConfig, timings_dir: str | Path | None = None) -> DecodeResult:
    """Write `predictions_dir/<cfg.split>.parquet` with the summaries of the model folders `members` decoded
    as one ensemble named `name` (module docstring), and its figures to `<timings_dir>/decode/<name>.json`."""
    from sumpipe.decode.ensemble import load_ensemble
    from sumpipe.device import resolve_device

    model, vocab, card = load_ensemble(members, device=resolve_device(cfg.device, "decode.device"))
    return _decode_split(model, vocab, card, members[0], name, extracted_dir, predictions_dir, cfg, timings_dir,
                         None, without_rule=False)


def _decode_split(model: Any, vocab: Any, card: Any, model_dir: Path, run: str, extracted_dir: str | Path,
                  predictions_dir: str | Path, cfg: DecodeConfig, timings_dir: str | Path | None,
                  report_examples: ReportExamples | None, without_rule: bool) -> DecodeResult:
    """Decode the split of `card`'s input selection with `model` and write the predictions (and, with
    `without_rule`, the summaries without the adjacent rule) under `predictions_dir` (module docstring)."""
    import pandas as pd
    from tqdm import tqdm

    from sumpipe.decode.batches import resolve_max_length, stage_config, summarize
    from sumpipe.io.atomic import read_parquet, write_parquet
    from sumpipe.io.bookkeeping import remove

    cfg = stage_config(cfg, card)  # decode.target_length: for a model trained with length control
    selection = card.input
    if not selection:
        raise SumpipeError(f"{model_dir / CARD_FILE}: names no input selection (`input`), cannot pick its data")
    frame = read_parquet(Path(extracted_dir) / selection / f"{cfg.split}.parquet", contract=EXTRACTED)
    missing = sorted({"id", "source", "reference"} - set(frame.columns))
    if missing:
        raise SumpipeError(f"{extracted_dir}/{selection}/{cfg.split}.parquet: lacks column(s) {', '.join(missing)}")
    if frame.empty:
        raise SumpipeError(f"{extracted_dir}/{selection}/{cfg.split}.parquet: has no rows to summarise")

    without, kept = Path(predictions_dir) / without_rule_file(cfg.split), attention_path(predictions_dir, cfg.split)
    _check_outputs(Path(predictions_dir) / f"{cfg.split}.parquet", without, kept, timings_dir, run)

    ids = frame["id"].astype(str).tolist()
    sources = frame["source"].fillna("").astype(str).tolist()
    todo = [i for i, s in enumerate(sources) if s.split()]
    position = {ids[i]: k for k, i in enumerate(todo)}  # id -> its index among the decoded documents
    # the report's heat-map examples; one left empty by the selection has no summary, so no attention
    heat_ids = [i for i in report_examples.heatmaps(ids) if i in position] if report_examples else []
    predictions = [""] * len(frame)
    started = time.perf_counter()
    with tqdm(total=len(todo), desc=f"decode {run}", unit="doc", disable=None) as bar:

        def progress(chunk: list[int], elapsed: float) -> None:
            bar.update(len(chunk))

        summaries = summarize(model, vocab, card, [sources[i] for i in todo], cfg, progress=progress,
                              details={position[i] for i in heat_ids})
    for i, summary in zip(todo, summaries):
        predictions[i] = summary.text
    total = time.perf_counter() - started

    def table(texts: list[str]) -> pd.DataFrame:
        out: dict[str, Any] = {"id": frame["id"].astype(str), "prediction": texts, "reference": frame["reference"]}
        if "references" in frame.columns:
            out["references"] = frame["references"]
        return pd.DataFrame(out)

    path = write_parquet(table(predictions), Path(predictions_dir) / f"{cfg.split}.parquet")
    if without_rule and cfg.block_adjacent_repeat:  # the same decoding without the rule: the report shows both
        unblocked = [""] * len(frame)
        plain = dataclasses.replace(cfg, block_adjacent_repeat=False)
        for i, summary in zip(todo, summarize(model, vocab, card, [sources[i] for i in todo], plain)):
            unblocked[i] = summary.text
        write_parquet(table(unblocked), without)
    else:
        remove(without, "the summaries without the adjacent rule")  # an earlier run's would describe another rule
    if report_examples is None:
        remove(kept, "the report's attention")  # an earlier run's would no longer match these predictions
    else:
        write_parquet(attention_table(heat_ids, [summaries[position[i]] for i in heat_ids]), kept)
    result = DecodeResult(path, len(frame), total, resolve_max_length(cfg, card))
    if timings_dir is not None:
        _record_timings(timings_dir, run, result, len(todo), cfg)
    return result


def _check_outputs(predictions: Path, without: Path, attention: Path, timings_dir: str | Path | None,
                   run: str) -> None:
    """Before decoding: every file the run writes, replaces or removes can be (`sumpipe.io.bookkeeping`)."""
    from sumpipe.io.bookkeeping import check_replaceable, refuse_folder
    from sumpipe.timings import check_writable

    check_replaceable(predictions, "the predictions")
    refuse_folder(without, "the summaries without the adjacent rule")
    refuse_folder(attention, "the report's attention")
    if timings_dir is not None:
        check_writable(timings_dir, "decode", run)


def _record_timings(timings_dir: str | Path, name: str, result: DecodeResult, decoded: int, cfg: DecodeConfig) -> None:
    from sumpipe.timings import record_run

    record_run(timings_dir, "decode", name, {
        "documents": result.n_documents, "decoded": decoded, "seconds": round(result.seconds, 3),
        "docs_per_s": round(decoded / result.seconds, 2) if result.seconds > 0 else None,
        "strategy": cfg.strategy, "batch_size": cfg.batch_size,
    })
