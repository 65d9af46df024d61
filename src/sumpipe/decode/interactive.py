"""`sumpipe decode INPUT`: summarise raw text from a file or stdin with a trained model.

Kept light on purpose (the command must answer in about 3 s on a CPU): torch and the model are
imported only once the input has been read and checked, and only the model directory (plus the
n-gram table for a hybrid `ngram<N>` model) is loaded.

Bad input is a one-line `SumpipeError`, decided as follows:
- a missing path, a directory, an unreadable file: rejected;
- UTF-16/UTF-32 with a byte order mark: decoded as such (a UTF-8 BOM is dropped);
- otherwise NUL bytes in the first 64 KiB: rejected as binary;
- other invalid UTF-8 (e.g. a Latin-1 file): rejected, naming the first bad byte and its offset
  (nothing is dropped silently; a UTF-8 sequence cut by the size cap below is not an error);
- empty or whitespace-only input: rejected;
- a huge file: only the first `MAX_RAW_CHARS` characters (about 4 bytes each at most) of a single
  document are read; with --per-line/--per-block each document is cut to that length, and the input
  as a whole may not exceed `MAX_STREAM_BYTES` (an endless stream is an error, not a MemoryError);
- no Latin-script text after preprocessing (it drops non-ASCII characters): rejected for a single
  document; with several documents such a document, like a blank line of --per-line, gets an empty
  summary in its place (one output per input document: `paste input.txt output.txt` pairs them), and
  one note on stderr at the end counts them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from sumpipe.errors import SumpipeError
from sumpipe.inputs import loads_json, open_regular, read_capped
from sumpipe.io.text import text_encoding
from sumpipe.models.card import CARD_FILE
from sumpipe.models.folders import is_trained, model_group, pick_seed, seed_folders
from sumpipe.terminal import StdoutError, printable

SNIFF_BYTES = 1 << 16
MAX_JSON_BYTES = 64 << 20  # metrics/rouge.json is kilobytes
MAX_STREAM_BYTES = 256 << 20  # several documents at once: ~1 M news articles; past it, split the input
NO_TEXT = "no Latin-script text to summarise (preprocessing keeps ASCII only)"
BLANK = "blank: nothing to summarise"


def text_error(raw: str) -> str:
    """Why `raw` gets no summary: it is blank (`BLANK`), or it has no Latin-script text (`NO_TEXT`)."""
    return NO_TEXT if raw.strip() else BLANK


def no_text(documents: int) -> str:
    """The error when none of `documents` texts has anything to summarise (`NO_TEXT`), said once, plainly:
    "no document has no Latin-script text" was a double negative."""
    if documents == 0:
        return "no text to summarise (no document was given)"
    if documents == 1:
        return f"the input has {NO_TEXT}"
    return f"none of the {documents:,} documents has {NO_TEXT.removeprefix('no ')}"
STREAM_DOCUMENTS = 256  # documents preprocessed, summarised and printed at a time (several batches each)


# --------------------------------------------------------------------------------------------
# Reading the input
# --------------------------------------------------------------------------------------------
def _read_bytes(stream: BinaryIO, limit: int | None) -> bytes:
    return stream.read() if limit is None else stream.read(limit)


def read_input(source: str, limit_bytes: int | None = None, max_bytes: int | None = None) -> str:
    """The text of file `source` ("-" = stdin), checked as described in the module docstring:
    `limit_bytes` reads only that much (one document is cut), `max_bytes` refuses a larger input."""
    name = "stdin" if source == "-" else source
    if limit_bytes is None and max_bytes is not None:
        limit_bytes = max_bytes + 1  # one byte more tells a too-large input from one that fits exactly
    if source == "-":
        if sys.stdin is None:  # the shell closed fd 0 (`0<&-`), so Python has no sys.stdin at all
            raise SumpipeError("stdin: is closed; give a file or pipe text in")
        data = _read_bytes(sys.stdin.buffer, limit_bytes)
    else:
        # a regular file only: a named pipe without a writer would block forever, /dev/zero never ends
        with open_regular(source, "; pipe its text to stdin instead, with `-` as the input") as f:
            try:
                data = _read_bytes(f, limit_bytes)
            except OSError as exc:
                raise SumpipeError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    if max_bytes is not None and len(data) > max_bytes:
        raise SumpipeError(f"{name}: larger than {max_bytes >> 20} MB, the most one run reads; split the input")
    encoding = text_encoding(data[:4])
    if encoding == "utf-8-sig" and b"\x00" in data[:SNIFF_BYTES]:
        raise SumpipeError(f"{name}: looks like a binary file (NUL bytes); give UTF-8 text")
    text = decode_text(data, encoding, name, truncated=limit_bytes is not None and len(data) >= limit_bytes)
    if not text.strip():
        raise SumpipeError(f"{name}: is empty")
    return text


def decode_text(data: bytes, encoding: str, name: str, truncated: bool = False) -> str:
    """`data` decoded strictly; invalid bytes are a one-line error naming the first one and its byte
    offset. When the read was cut at a size cap (`truncated`), a character the cut split is dropped."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        if truncated and exc.reason == "unexpected end of data":
            return data[: exc.start].decode(encoding)
        label = "UTF-8" if encoding == "utf-8-sig" else encoding.upper()
        raise SumpipeError(f"{name}: not {label} text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                           "save it as UTF-8, e.g. `iconv -f latin1 -t utf-8`") from None


def split_documents(text: str, per_line: bool, per_block: bool) -> list[str]:
    """One document; one per line, blank lines included (lines as `wc -l` and `paste` count them: split
    at "\\n" alone, a final newline ending the last line), so the n-th output line is the n-th input
    line's summary; or one per block of non-blank lines (a run of blank lines is one separator;
    blank lines before the first block and after the last are not blocks)."""
    if per_line:
        docs = text.split("\n")
        return docs[:-1] if docs[-1] == "" else docs
    if per_block:
        return [d for d in re.split(r"\n(?:[ \t\r\f\v]*\n)+", text) if d.strip()]
    return [text]


# --------------------------------------------------------------------------------------------
# Choosing the model
# --------------------------------------------------------------------------------------------
def trained_models(models_root: Path, preferred: Iterable[str] = ()) -> list[str]:
    """Names of the trained models under `models_root` (a folder of seeds, or a model folder), the ones
    in `preferred` (params.yaml order) first."""
    if not models_root.is_dir():
        return []
    found = sorted(p.name for p in models_root.iterdir() if is_trained(p))
    first = [n for n in preferred if n in found]
    return first + [n for n in found if n not in first]


def _metric(entry: Any, name: str) -> float | None:
    value = entry.get(name) if isinstance(entry, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_rouge(metrics_file: Path) -> dict[str, Any]:
    """metrics/rouge.json as a mapping; {} when absent or unreadable (the figures are optional here)."""
    try:  # a broken one, too large or too deeply nested, is no reason to refuse to summarise
        scores = loads_json(read_capped(metrics_file, MAX_JSON_BYTES, "a metrics file"), str(metrics_file))
    except SumpipeError:
        return {}
    return scores if isinstance(scores, dict) else {}


def best_by_rouge(metrics_file: Path, candidates: list[str]) -> str | None:
    """The candidate with the highest rougeL in metrics/rouge.json (a model's mean over its seeds)."""
    scores = read_rouge(metrics_file)
    ranked = [(value, name) for name in candidates if (value := _metric(scores.get(name), "rougeL")) is not None]
    return max(ranked)[1] if ranked else None


def unknown_model(model: str, models_root: Path, available: Sequence[str], preferred: Iterable[str] = (),
                  ensembles: Iterable[str] = ()) -> str:
    """The one-line error for a --model that names nothing: every name that would answer (the trained
    models under `models_root`, the ensembles of params.yaml), the models of params.yaml not trained
    yet, and that a model folder's path answers too."""
    listing = ", ".join(available) if available else "none yet (run `dvc repro`)"
    parts = [f"unknown model {model!r}; trained models in {models_root}/: {listing}"]
    ensembles = list(ensembles)
    if ensembles:
        parts.append(f"ensembles of params.yaml: {', '.join(ensembles)}")
    untrained = [name for name in preferred if name not in available]
    if untrained:
        parts.append(f"in params.yaml but not trained yet: {', '.join(untrained)}")
    return "; ".join(parts) + "; or give a model folder's path (--project DIR: another project's models)"


def find_model_folder(model: str | None, models_root: Path, metrics_file: Path,
                      preferred: Iterable[str] = (), ensembles: Iterable[str] = ()) -> Path:
    """The folder --model names: a folder or a name under models_root, else the best trained model by its
    mean rougeL in metrics/rouge.json, else M1, else the first trained one. A model folder (a card), or a
    model's folder of seeds. An unknown name is `unknown_model`'s error (`ensembles`: the names of
    params.yaml's `ensembles:`, which `Summarizer.open` answers before this)."""
    preferred = list(preferred)
    available = trained_models(models_root, preferred)
    if model:
        chosen = next((d for d in (Path(model), models_root / model) if is_trained(d)), None)
        if chosen is None:
            raise SumpipeError(unknown_model(model, models_root, available, preferred, ensembles))
        return chosen
    if not available:
        raise SumpipeError(f"no trained models in {models_root}/ (run `dvc repro`, or pass --model DIR)")
    return models_root / (best_by_rouge(metrics_file, available) or ("M1" if "M1" in available else available[0]))


def find_model_dir(model: str | None, models_root: Path, metrics_file: Path, preferred: Iterable[str] = (),
                   seed: int | None = None, ensembles: Iterable[str] = ()) -> Path:
    """The model folder to decode with (`find_model_folder`); of a model trained with several seeds, seed
    `seed`, else the seed `pick_seed` picks."""
    chosen = find_model_folder(model, models_root, metrics_file, preferred, ensembles)
    if (chosen / CARD_FILE).is_file():
        if seed is not None:
            raise SumpipeError(f"--train-seed {seed}: {chosen} is one trained model, not a folder of seeds")
        return chosen
    return pick_seed(chosen, seed)


def find_ensemble(model: str | None, models_root: Path, metrics_file: Path, preferred: Iterable[str] = (),
                  seeds: Sequence[int] | None = None, ensembles: Iterable[str] = ()) -> list[Path]:
    """The seed folders that decode as one ensemble (`sumpipe.decode.ensemble`): every trained seed of the
    model `find_model_folder` finds, or `seeds`; checked to fit together (`sumpipe.decode.members`)."""
    from sumpipe.decode.members import check_ensemble, ensemble_folders

    chosen = find_model_folder(model, models_root, metrics_file, preferred, ensembles)
    if (chosen / CARD_FILE).is_file():
        raise SumpipeError(f"--ensemble: {chosen} is one trained model, not a folder of seeds")
    folders = ensemble_folders(chosen, seeds)
    check_ensemble(folders)
    return folders


# --------------------------------------------------------------------------------------------
# Running it
# --------------------------------------------------------------------------------------------
PROGRESS_DELAY_S = 1.0  # a bar only for an input that takes longer than this: a quick one draws none


def progress_bar(n_documents: int, progress: bool | None = None) -> Any:
    """A tqdm bar over `n_documents` on stderr, like the stages' bars, or None: `progress` None draws it
    only on a terminal (stderr a tty) for several documents, after `PROGRESS_DELAY_S`; True always (no
    delay), False never. It is left off the screen when done (`leave=False`): the summaries stay."""
    if progress is False or (progress is None and n_documents < 2):
        return None
    from tqdm import tqdm

    bar = tqdm(total=n_documents, desc="decode", unit="doc", file=sys.stderr, leave=False, dynamic_ncols=True,
               disable=None if progress is None else False, delay=PROGRESS_DELAY_S if progress is None else 0.0)
    return None if bar.disable else bar


def _domain_note(summarizer: Any, summaries: Sequence[Any]) -> str | None:
    """The domain note of these summaries' documents (`Summarizer.domain_check`), when there is one."""
    check = summarizer.domain_check(summaries)
    return None if check is None else check.note()


def _rounded(values: Any, digits: int = 4) -> Any:
    if values is None:
        return None
    if hasattr(values, "tolist"):
        values = values.tolist()
    if isinstance(values, list):
        return [_rounded(v, digits) for v in values]
    return round(float(values), digits)


def _test_figures(entry: Any, seed: int | None) -> str | None:
    """"test ROUGE-1 22.47 ± 0.48 over 3 seeds (seed 2: 23.03)" from a model's rouge.json entry."""
    mean = _metric(entry, "rouge1")
    if mean is None:
        return None
    sd, n_seeds = _metric(entry, "rouge1_sd"), _metric(entry, "n_seeds")
    if sd is None or not n_seeds or n_seeds < 2:
        return f"test ROUGE-1 {mean:.2f}"
    this = _metric(entry.get("seeds", {}).get(str(seed)), "rouge1") if isinstance(entry.get("seeds"), dict) else None
    return f"test ROUGE-1 {mean:.2f} ± {sd:.2f} over {int(n_seeds)} seeds" + (
        f" (seed {seed}: {this:.2f})" if this is not None else "")


def model_note(model_dir: Path, models_root: Path, metrics_file: Path, seed_given: bool = False,
               members: Sequence[Path] = ()) -> str:
    """One line for stderr: which model (and which of its training seeds) decodes, what it was trained
    on, and how it scored.

    `note: model M2 seed 2 (lowest validation loss of 3 seeds; --train-seed picks another) (transformer,
    input first40) trained on pydoc (8,119 examples); test ROUGE-1 22.47 ± 0.48 over 3 seeds (seed 2:
    23.03), Lead-3 21.42 (metrics/rouge.json)`. With several `members` (an ensemble, `model_dir` the
    first): `note: model PG-cov, an ensemble of 3 seeds (1, 2, 3) (rnn, ...) ...; its seeds alone: test
    ROUGE-1 ...`. The scores are read only for a model of `models_root` (a folder elsewhere may share a
    name but not the run); without them the line says how to get them.
    """
    from sumpipe.models.card import read_card

    card = read_card(model_dir)
    examples = card.training.get("train_examples")  # the card's free-form summary: any JSON, a count or not
    count = examples if isinstance(examples, int) and not isinstance(examples, bool) and examples > 0 else None
    trained_on = f"{card.dataset or 'an unnamed data set'}" + (f" ({count:,} examples)" if count else "")
    what = f"{card.family}, input {card.input or 'the whole text'}"
    group = model_group(model_dir, card)
    name = group.name
    which = f"model {name}"
    ensemble = len(members) > 1
    if ensemble:
        seeds = [read_card(folder).seed for folder in members]
        which += f", an ensemble of {len(members)} seeds ({', '.join(str(s) for s in seeds)})"
    elif group != model_dir:
        n_seeds = len(seed_folders(group))
        why = ("--train-seed" if seed_given else "its only seed" if n_seeds == 1
               else f"lowest validation loss of {n_seeds} seeds; --train-seed picks another")
        which += f" seed {card.seed} ({why})"
    # the card's strings are the model folder's, not ours: escaped, they cannot forge or hide a line
    note = printable(f"note: {which} ({what}) trained on {trained_on}")
    scores = read_rouge(metrics_file) if group.resolve() == (models_root / name).resolve() else {}
    figures = _test_figures(scores.get(name), None if ensemble else card.seed)
    if figures is None:
        return f"{note}; no test ROUGE yet (`dvc repro` writes {metrics_file})"
    lead_r1 = _metric(scores.get("lead3"), "rouge1")
    lead = f", Lead-3 {lead_r1:.2f}" if lead_r1 is not None else ""
    return f"{note}; {'its seeds alone: ' if ensemble else ''}{figures}{lead} ({metrics_file})"


def summarize_input(
    documents: list[str],
    summarizer: Any,
    options: dict[str, Any],
    as_json: bool,
    one_line: bool,
    echo: Any,
    warn: Any,
    as_tokens: bool = False,
    note: str | None = None,
    chunk: int = STREAM_DOCUMENTS,
    progress: bool | None = None,
) -> int:
    """Summarise raw `documents` with `summarizer` (a `sumpipe.decode.summarizer.Summarizer`, the public
    API's; not imported here, as it imports this module's resolver) and `options` (its decoding
    keywords), and print them (readable text, the tokenized form with `as_tokens`, or JSON Lines
    with per-token p_gen and attention); returns the number summarised.

    Documents go `chunk` at a time, each chunk printed (and flushed) as soon as it is summarised: a
    million one-line documents start coming out at once, not after the last. `note` (`model_note`)
    goes to `warn` when the first summaries are ready, so a run that fails on its first documents ends
    in its one error line alone; a run that fails later says how far it got. Every document gets one
    output, in its place: a blank one or one without Latin-script text an empty line (`one_line`), an
    empty block, or a JSON record with its `error`, printed with the first summary that follows it,
    and one note at the end counts them (`empty_note`); if no document has any text, nothing is
    printed but the error.

    With the first summaries also comes the domain note (`Summarizer.domain_check` over the first
    chunk's documents): one line when the input's words are far more often outside the model's
    vocabulary than its training texts' were. Several documents get a progress bar on stderr
    (`progress_bar`), cleared while lines are printed."""
    # A few documents make tiny per-step matrices: thread hand-offs cost more than they save, and on
    # a busy machine they stall (measured: 0.05 s with 1 thread, 1-2 s with 2, under load).
    threads = None if "OMP_NUM_THREADS" in os.environ else 1
    generator = summarizer.generator(options)  # sampling: one random stream through every chunk
    held: list[Any] = []  # (index, summary) of documents without text, not yet printed (see above)
    done = summarised = 0
    bar = progress_bar(len(documents), progress)
    quiet = bar.external_write_mode if bar is not None else contextlib.nullcontext  # lines under no bar

    empty: dict[str, list[int]] = {}  # error -> the documents (1-based) it emptied, for the one note

    def show(i: int, summary: Any) -> None:
        if summary.error:
            empty.setdefault(summary.error, []).append(i + 1)
        text = summary.tokenized if as_tokens else summary.text
        if as_json:
            record: dict[str, Any] = {"document": i + 1, "model": summarizer.name, "seed": summarizer.seed}
            if len(summarizer.seeds) > 1:  # an ensemble: every member's seed
                record["seeds"] = summarizer.seeds
            if summary.error:
                record.update(summary="", error=summary.error)
            else:
                record.update(
                    summary=text, tokens=summary.tokens, score=_rounded(summary.score),
                    p_gen=_rounded(summary.p_gen), source_tokens=summary.source_tokens,
                    attention=_rounded(summary.attention))
            echo(printable(json.dumps(record, ensure_ascii=False)))
        else:
            text = printable(text, lines=True)  # the model's words, from its folder: escaped like any file's
            echo(text.replace("\n", " ") if one_line else text + ("\n" if len(documents) > 1 else ""))

    try:
        for start in range(0, len(documents), chunk):
            part = range(start, min(start + chunk, len(documents)))
            summaries = summarizer.summarize([documents[i] for i in part], details=as_json, threads=threads,
                                             strict=False, generator=generator, **options,
                                             progress=None if bar is None else bar.update)
            if bar is not None:
                bar.update(part.stop - bar.n)  # documents without text are not decoded: counted here
            if all(summary.error for summary in summaries):
                held += list(zip(part, summaries))
                continue
            with quiet():
                if not summarised:
                    for line in (note, _domain_note(summarizer, summaries)):
                        if line:
                            warn(line)
                for i, summary in [*held, *zip(part, summaries)]:
                    show(i, summary)
            held, done = [], part.stop
            summarised += sum(1 for summary in summaries if not summary.error)
            flush = getattr(sys.stdout, "flush", None)
            if callable(flush):
                flush()
    except SumpipeError as exc:
        if done and not isinstance(exc, StdoutError):  # the summaries so far are out: say where it stopped
            raise SumpipeError(f"{exc} (stopped at document {done + 1:,} of {len(documents):,}; "
                               f"the {done:,} before it were printed)") from None
        raise
    except KeyboardInterrupt:
        if done:
            warn(f"note: interrupted at document {done + 1:,} of {len(documents):,}; "
                 f"the {done:,} before it were printed")
        raise
    finally:
        if bar is not None:
            bar.close()
    if not summarised:
        raise SumpipeError(no_text(len(documents)))
    if empty:
        warn(empty_note(empty, len(documents)))
    return summarised


def _numbers(documents: list[int], most: int = 8) -> str:
    shown = ", ".join(str(n) for n in documents[:most])
    return ("document " if len(documents) == 1 else "documents ") + shown + (", ..." if len(documents) > most else "")


def empty_note(empty: dict[str, list[int]], n_documents: int) -> str:
    """The one stderr line that counts the documents left without a summary, by reason: `note: 3 of 6
    documents have an empty summary in their place: 2 blank (documents 2, 5); 1 with no Latin-script
    text ... (document 4)`."""
    n = sum(len(docs) for docs in empty.values())
    parts = [f"{len(docs):,} {'blank' if error == BLANK else 'with ' + error} ({_numbers(docs)})"
             for error, docs in sorted(empty.items(), key=lambda item: item[1][0])]
    has = "has" if n == 1 else "have"
    return f"note: {n:,} of {n_documents:,} documents {has} an empty summary in their place: {'; '.join(parts)}"
