"""The embedded default corpus: Python docstrings as (extended description -> summary line) pairs.

Real English written by people, already on every machine that runs sumpipe, so `dvc repro` works
offline. For each package in `data.options.pydoc.packages` ("stdlib" = the standard library) the source
files are found without importing anything (importing runs module code: `antigravity` opens a
browser, tkinter needs a display, torch submodules are slow) and parsed with `ast`; every module,
class and function docstring gives at most one pair:

    reference = the summary: the first paragraph, joined to one line
    source    = the extended description after it, one paragraph a line ("\\n"), up to the first
                section: numpydoc / reST headings (Parameters, Returns, Examples, See Also, Notes,
                ... any underlined heading), Google sections ("Args:", "Returns:", "Example::",
                "Note:", ...) and reST field lists (":param x:", ":returns:", ...)

Dropped on the way: doctest blocks (">>>"), literal blocks (the indented block after "::", any
indented block that opens a paragraph), ``` fences, reST directives (".. note::", ".. math::",
".. versionadded::" with their bodies), tables (grid, simple and Markdown tables, any line of
=, -, ~, +, |) and the sentence that introduces a dropped block ("For example::"). Inline reST
markup is reduced to its text (":class:`~a.B`" -> "B", "``x``" -> "x"). Paragraphs with inline
math, a lower-case paragraph right after a removed block (the rest of its sentence: "where ..."),
licence/warranty text, capitals-only notices, TODO notes and sklearn's "Read more in the User
Guide" are dropped too. A first paragraph that is a call signature ("f(x, y) -> z") is skipped and
the next one is the summary; docstrings that are templates (pandas' "%(klass)s") give no pair.
A pair is kept when both sides are within `data.options.pydoc` word limits and read as prose (`is_prose`).

Determinism: files are read in sorted order, pairs are sorted by id before deduplication (same
source -> keep the first), so the corpus depends only on the installed versions (recorded in
stats). Skipped: tests and test harnesses (test/, tests/, testing/, test_*.py, conftest.py: they
describe tests, not APIs), vendored third-party code (_vendor/, externals/, ...) and files over
1 MB (generated tables such as pydoc_data/topics.py). Cost: parsing is the whole cost, about 20 s
for the six default packages on an idle core (torch is 40 MB of source); drop torch from
`data.options.pydoc.packages` for a faster, smaller corpus.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.metadata
import importlib.util
import multiprocessing
import platform
import re
import sys
import sysconfig
import warnings
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path

from tqdm import tqdm

from sumpipe.config import DataConfig
from sumpipe.data.datasets import DATASETS, Dataset, Lengths, Rows
from sumpipe.validation import MAX_WORKERS, child_key, require, require_at_most


@dataclass(frozen=True)
class PydocOptions:
    """`data.options.pydoc`: which packages' docstrings, and the word limits a pair must meet."""

    packages: list[str] = field(default_factory=lambda: ["stdlib", "numpy", "pandas", "sklearn", "torch", "scipy"])
    min_source_words: int = 12
    max_source_words: int = 400
    min_reference_words: int = 3
    max_reference_words: int = 40
    workers: int = 2  # processes parsing the source files; the corpus does not depend on it

    def check(self, key: str) -> None:
        require(self.workers >= 1, child_key(key, "workers"), "must be >= 1")
        require_at_most(self.workers, MAX_WORKERS, child_key(key, "workers"))
        require(self.min_source_words >= 1, child_key(key, "min_source_words"), "must be >= 1")
        require(self.max_source_words >= self.min_source_words, child_key(key, "max_source_words"),
                "must be >= min_source_words")
        require(self.min_reference_words >= 1, child_key(key, "min_reference_words"), "must be >= 1")
        require(self.max_reference_words >= self.min_reference_words, child_key(key, "max_reference_words"),
                "must be >= min_reference_words")


# Tests and test harnesses (docstrings about tests, not APIs), vendored third-party code (another
# project's docs, often duplicated across packages) and installed packages below the stdlib.
SKIP_DIRS = {
    "test", "tests", "idle_test", "testing", "_testing", "__pycache__", "site-packages", "dist-packages",
    "_vendor", "vendor", "vendored", "_vendored", "externals",
}
# Larger files are generated tables or test matrices (pydoc_data/topics.py, ...), slow to parse.
MAX_FILE_BYTES = 1_000_000

# ---------------------------------------------------------------------------------------------
# Line patterns
# ---------------------------------------------------------------------------------------------
SECTION_NAMES = (
    r"args|arguments|keyword args|keyword arguments|other parameters|parameters|params|"
    r"returns?|yields?|raises|warns|warnings?|examples?|example usage|usage|notes?|see also|"
    r"references|attributes|methods|shape|inputs|outputs|todo"
)
# Google style "Args:" / "Example::" alone on a line, or "Returns: the ..." with its text.
GOOGLE_SECTION = re.compile(
    rf"^(({SECTION_NAMES})\s*:{{1,2}}|(args|arguments|parameters|returns?|yields?|raises)\s*:\s.*)$",
    re.IGNORECASE,
)
# reST field list ":param x:", ":returns:", ":rtype:".
FIELD_LIST = re.compile(
    r"^:(param|parameter|arg|argument|key|keyword|type|raises?|except|exception|returns?|rtype|"
    r"yields?|ytype|var|ivar|cvar|vartype|meta)\b[^:]*:(\s|$)"
)
# A line of punctuation only: a heading underline, a table border or a transition.
RULE = re.compile(r"^[=\-~^*+#`:_.|' ]*[=\-~^*+#_]{3,}[=\-~^*+#`:_.|' ]*$")
# Grid and Markdown table rows.
TABLE_ROW = re.compile(r"^(\+[-=+]+\+|\|.*\|)$")
BULLET = re.compile(r"^([-*+\u2022]|\d+[.)]|\([a-z0-9]\)|#\.)\s+")
# A first paragraph that is a call signature, e.g. "dumps(obj, protocol=None) -> bytes".
SIGNATURE = re.compile(r"^[\w.]+\(.*\)(\s*->.*)?$")

# Inline reST markup, reduced to its text.
ROLE_TILDE = re.compile(r"(?::[\w.+-]+)+:`~?(?:[^`<]*\.)?([^`<.]+)`")  # :class:`~a.b.C` -> C
ROLE = re.compile(r"(?::[\w.+-]+)+:`([^`<]+?)\s*(?:<[^`>]*>)?`")  # :func:`title <target>` -> title
LINK = re.compile(r"`([^`<]+?)\s*(?:<[^`>]*>)?`__?")  # `text <url>`_ -> text
LITERAL = re.compile(r"``(.+?)``")
INTERPRETED = re.compile(r"`([^`]+)`")
STRONG = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")
EMPHASIS = re.compile(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])")
FOOTNOTE = re.compile(r"\s*\[[\w#*.-]+\]_")
SPACES = re.compile(r"\s+")
TEMPLATE = re.compile(r"%\(\w+\)[sdr]")
# Paragraphs that are not description: licences, developer notes, sklearn's "Read more in the User Guide".
BOILERPLATE = re.compile(
    r"copyright|all rights reserved|licen[cs]e[ds]? (under|to)|warrant|liable|\bauthors?:|^(todo|fixme|xxx)\b|"
    r"^read more in the",
    re.IGNORECASE,
)
LATEX = re.compile(r"[A-Za-z_]\{")
PLAIN_WORD = re.compile(r"""^[("'\[]*[A-Za-z][a-z'-]*[)"',.;:!?\]]*$""")


def clean_markup(text: str) -> str:
    """Reduce inline reST/Markdown markup to plain text and collapse whitespace."""
    text = ROLE_TILDE.sub(lambda m: m.group(1) if "~" in m.group(0) else m.group(0), text)
    text = ROLE.sub(r"\1", text)
    text = LITERAL.sub(r"\1", text)
    text = LINK.sub(r"\1", text)
    text = INTERPRETED.sub(r"\1", text)
    text = STRONG.sub(r"\1", text)
    text = EMPHASIS.sub(r"\1", text)
    text = FOOTNOTE.sub("", text)
    text = text.replace("\\ ", "").replace("\\", "")
    return SPACES.sub(" ", text).strip()


# ---------------------------------------------------------------------------------------------
# Docstring -> (summary, description)
# ---------------------------------------------------------------------------------------------
@dataclass
class _Paragraph:
    lines: list[str]
    after_dropped_block: bool = False
    before_dropped_block: bool = False

    def text(self) -> str:
        return " ".join(self.lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_rule(line: str) -> bool:
    return bool(RULE.match(line.strip()))


def _is_section(line: str) -> bool:
    stripped = line.strip()
    return bool(GOOGLE_SECTION.match(stripped) or FIELD_LIST.match(stripped))


def _skip_block(lines: list[str], i: int, until_dedent: bool) -> int:
    """Index after the block starting at line i: up to a blank line, or (until_dedent) up to the
    next non-blank line indented no deeper than line i's parent (column 0 in a cleaned docstring)."""
    n = len(lines)
    if not until_dedent:
        while i < n and lines[i].strip():
            i += 1
        return i
    base = _indent(lines[i]) if lines[i].strip().startswith(".. ") else 0
    i += 1
    while i < n and (not lines[i].strip() or _indent(lines[i]) > base):
        i += 1
    return i


def _paragraphs(doc: str) -> list[_Paragraph]:
    """Split a cleaned docstring into prose paragraphs, stopping at the first section."""
    lines = doc.expandtabs().splitlines()
    paragraphs: list[_Paragraph] = []
    current: list[str] = []
    have_summary = False
    last_was_dropped = False

    def flush() -> None:
        nonlocal current, have_summary, last_was_dropped
        if current:
            paragraphs.append(_Paragraph(current, after_dropped_block=last_was_dropped))
            have_summary = True
            last_was_dropped = False
            current = []

    def dropped() -> None:
        # A block was removed right after the paragraph being built or the last one.
        nonlocal last_was_dropped
        flush()
        if paragraphs:
            paragraphs[-1].before_dropped_block = True
        last_was_dropped = True

    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        if _is_section(line):
            break
        next_is_rule = i + 1 < n and _is_rule(lines[i + 1]) and not _is_rule(line)
        if next_is_rule and not current:
            # An underlined heading: a title before the summary is skipped, later it ends the text.
            if have_summary:
                break
            i += 2
            continue
        if _is_rule(line) or TABLE_ROW.match(stripped):  # a table (or a transition): up to a blank line
            i = _skip_block(lines, i, until_dedent=False)
            dropped()
            continue
        if stripped.startswith(">>>"):
            i = _skip_block(lines, i, until_dedent=False)
            dropped()
            continue
        if stripped.startswith("```"):
            i += 1
            while i < n and not lines[i].strip().startswith("```"):
                i += 1
            i += 1
            dropped()
            continue
        if stripped == ".." or stripped.startswith(".. "):  # directive, comment or link target + body
            i = _skip_block(lines, i, until_dedent=True)
            dropped()
            continue
        if _indent(line) > 0 and (not current or current[-1].endswith(":")):
            # A literal block ("format::"), block quote or an indented list/table after "...:".
            i = _skip_block(lines, i, until_dedent=True)
            dropped()
            continue
        bullet = BULLET.match(stripped)
        if bullet:
            flush()  # each list item becomes its own line
            stripped = stripped[bullet.end():]
        current.append(stripped)
        i += 1
    flush()
    return paragraphs


def _drop_intro_sentence(text: str) -> str:
    """Remove the last sentence when it runs into a removed block ("For example:", "... is")."""
    if text.endswith((".", "!", "?", ")", '"', "'")):
        return text
    cut = max(text.rfind(". ", 0, len(text) - 1), text.rfind("? ", 0, len(text) - 1))
    return text[: cut + 1] if cut >= 0 else ""


def _shouting(text: str) -> bool:
    """Mostly capitals: legal notices ("NO WARRANTY IS EXPRESSED ..."), banners."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) > 20 and sum(c.isupper() for c in letters) > 0.6 * len(letters)


def split_docstring(doc: str) -> tuple[str, str] | None:
    """(summary, description) of a cleaned docstring, or None when it has no summary paragraph.

    The description keeps one paragraph a line; both are reduced to plain text.
    """
    if TEMPLATE.search(doc):
        return None  # a template filled in at import time (pandas' %(klass)s), not text yet
    paragraphs = _paragraphs(doc)
    if paragraphs and len(paragraphs[0].lines) == 1 and SIGNATURE.match(paragraphs[0].lines[0]):
        paragraphs = paragraphs[1:]
    if not paragraphs or ":math:" in paragraphs[0].text():
        return None
    summary = clean_markup(paragraphs[0].text())
    description = []
    for para in paragraphs[1:]:
        raw = para.text()
        if ":math:" in raw or BOILERPLATE.search(raw) or _shouting(raw):
            continue
        if para.after_dropped_block and raw[:1].islower():
            continue  # the rest of a sentence whose formula or code was removed ("where ...")
        text = clean_markup(raw)
        if text.endswith("::"):
            text = text[:-1]
        if para.before_dropped_block:
            text = _drop_intro_sentence(text)
        if text:
            description.append(text)
    return summary, "\n".join(description)


# ---------------------------------------------------------------------------------------------
# Finding and parsing source files
# ---------------------------------------------------------------------------------------------
def package_roots(name: str) -> list[Path] | None:
    """Directories (or the single file) holding `name`'s sources, found without importing it."""
    if name == "stdlib":
        return [Path(sysconfig.get_paths()["stdlib"])]
    if not name.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return sorted(Path(p) for p in spec.submodule_search_locations)
    if spec.origin and spec.origin.endswith(".py"):
        return [Path(spec.origin)]
    return None


@functools.lru_cache(maxsize=1)
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


def package_version(name: str) -> str:
    """"numpy 2.4.6" (distribution name and version) or "python 3.11.7" for the stdlib."""
    if name == "stdlib":
        return f"python {platform.python_version()}"
    dists = _distributions().get(name, [])
    for dist in sorted(dists):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


def source_files(name: str, roots: list[Path]) -> Iterator[tuple[str, Path]]:
    """(dotted module name, file) for every non-test .py file under `roots`, sorted."""
    for root in roots:
        if root.is_file():
            yield root.stem, root
            continue
        found = []
        for path in root.rglob("*.py"):
            rel = path.relative_to(root)
            if SKIP_DIRS.intersection(rel.parts[:-1]) or path.name.startswith("test_") or path.name == "conftest.py":
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            if not all(part.isidentifier() for part in rel.with_suffix("").parts):
                continue  # not importable: scripts, "config-3.11-x86_64-linux-gnu", ...
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module = ".".join(([] if name == "stdlib" else [root.name]) + parts) or root.name
            found.append((module, path))
        yield from sorted(found)


def docstrings(tree: ast.Module) -> Iterator[tuple[str, str]]:
    """(qualified name, cleaned docstring) for the module ("") and every class and function."""
    doc = ast.get_docstring(tree, clean=True)
    if doc:
        yield "", doc

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = f"{prefix}{child.name}"
                doc = ast.get_docstring(child, clean=True)
                if doc:
                    yield qualname, doc
                yield from visit(child, f"{qualname}.")
            elif isinstance(child, (ast.If, ast.Try, ast.With)):  # definitions under if/try
                yield from visit(child, prefix)

    yield from visit(tree, "")


@dataclass
class PydocStats:
    files: int = 0
    unreadable_files: int = 0
    docstrings: int = 0
    no_description: int = 0
    out_of_range: int = 0
    not_prose: int = 0
    duplicates: int = 0

    def add(self, other: PydocStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def is_prose(summary: str, description: str) -> bool:
    """Reject pairs that are mostly symbols, code or formulas left over from unusual markup, and
    summaries that only introduce something (":") or lost their end (",", " .")."""
    if not summary[:1].isalpha() or summary.endswith((":", ",", " .")) or LATEX.search(summary + " " + description):
        return False
    words = description.split()
    wordy = sum(1 for w in words if any(c.isalpha() for c in w) and not any(c in w for c in "=()[]{}<>_"))
    plain = sum(1 for w in words if PLAIN_WORD.match(w))
    return wordy >= 0.75 * len(words) and plain >= 0.6 * len(words)


def _file_pairs(path: Path, cfg: PydocOptions) -> tuple[PydocStats, list[tuple[str, str, str]]]:
    """One source file's (qualname, source, reference) pairs, and the counts of what it dropped."""
    stats = PydocStats(files=1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in old modules
            tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError, OSError):
        stats.unreadable_files += 1
        return stats, []
    found = []
    for qualname, doc in docstrings(tree):
        stats.docstrings += 1
        pair = split_docstring(doc)
        if pair is None or not pair[1]:
            stats.no_description += 1
            continue
        reference, source = pair
        n_ref, n_src = len(reference.split()), len(source.split())
        if not (cfg.min_reference_words <= n_ref <= cfg.max_reference_words
                and cfg.min_source_words <= n_src <= cfg.max_source_words):
            stats.out_of_range += 1
            continue
        if not is_prose(reference, source):
            stats.not_prose += 1
            continue
        found.append((qualname, source, reference))
    return stats, found


@contextlib.contextmanager
def _file_mapper(workers: int) -> Iterator[Callable]:
    """`map` over files in order: the built-in one, or a pool of `workers` processes (parsing is
    most of the stage's time). Linux forks, so workers start at once and never re-run `__main__`."""
    if workers <= 1:
        yield map
        return
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield functools.partial(pool.map, chunksize=16)


def build_pydoc(cfg: PydocOptions) -> tuple[list[dict], dict]:
    """All (id, source, reference) pairs of the configured packages, sorted by id, and stats."""
    stats = PydocStats()
    versions: dict[str, str] = {}
    missing: list[str] = []
    pairs: list[dict] = []
    with _file_mapper(cfg.workers) as map_files:
        for name in cfg.packages:
            roots = package_roots(name)
            if roots is None:
                missing.append(name)
                continue
            versions[name] = package_version(name)
            files = list(source_files(name, roots))
            results = map_files(functools.partial(_file_pairs, cfg=cfg), [path for _, path in files])
            progress = tqdm(results, total=len(files), desc=f"pydoc {name}", unit="file", disable=None, leave=False)
            for (module, _), (file_stats, found) in zip(files, progress):
                stats.add(file_stats)
                for qualname, source, reference in found:
                    example_id = f"{name}:{module}.{qualname}" if qualname else f"{name}:{module}"
                    pairs.append({"id": example_id, "source": source, "reference": reference})

    pairs.sort(key=lambda p: p["id"])
    kept, seen_ids, seen_sources = [], set(), set()
    for pair in pairs:
        if pair["id"] in seen_ids or pair["source"] in seen_sources:
            stats.duplicates += 1
            continue
        seen_ids.add(pair["id"])
        seen_sources.add(pair["source"])
        kept.append(pair)
    info = {
        "packages": versions,
        "packages_not_installed": missing,
        **vars(stats),
        "pairs": len(kept),
    }
    return kept, info


def load_pydoc(cfg: DataConfig, options: PydocOptions) -> Rows:
    """The `pydoc` data set of `data.options.pydoc`."""
    return build_pydoc(options)


# References keep at most data.options.pydoc.max_reference_words (40 by default), so the decode cap is 48;
# without that bound it was 72, which barely trained models fill with repetitions.
DATASETS.register("pydoc", Dataset(load=load_pydoc, options=PydocOptions,
                                   lengths=Lengths(longest_reference=PydocOptions().max_reference_words)))
