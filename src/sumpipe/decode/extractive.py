"""Raw text -> an extractive summary with any method of `sumpipe.extractive.methods`: the public
`sumpipe.load_extractive(method, **options)` and the `sumpipe summarize` command built on it.

    s = sumpipe.load_extractive("lexrank", threshold=0.2)
    s.summarize(text, sentences=2)            # a Summary (sumpipe.decode.summarizer): the same
                                              # interface for every method, and as sumpipe.load's

The text goes through the pipeline's preprocessing (as `sumpipe decode` does); the method ranks the
sentences and the best ones within the budget come out in document order, as the input wrote them
(after markup removal: `sumpipe.text.preprocess.preprocess_sentences`), joined by spaces (`text`);
`tokenized` is the pipeline's preprocessed form (lowercased tokens, one sentence per line).
Options: the method's own keyword options over params.yaml's `extractive.options.<method>`, checked
by its options dataclass (one line naming a bad one). Methods that use corpus statistics (idf,
entropy weights) read `<paths.extractive>/corpus.parquet` from the last `dvc repro` when it is
there, and otherwise take them from the input alone (every term equally rare); `lsa_collection`
reads the collection LSA space from the same folder (else the input's sentences are the
collection), and `ngram` (Morozovskii 2022 Alg. 1) needs the vocab stage's 3-gram table
(`<paths.vocab>/ngrams.parquet`). The oracle needs a reference and is refused.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from sumpipe.decode.interactive import NO_TEXT, text_error
from sumpipe.decode.summarizer import Project, Summary, open_project
from sumpipe.errors import SumpipeError

if TYPE_CHECKING:
    from sumpipe.extractive.methods import Method

MAX_BYTES = 20_000_000
# Sentences of one input: textrank's similarity matrix is S x S, LSA and NMF factorise S columns. At 2,000
# the slowest method (nmf) takes ~30 s and 0.5 GB on a busy 2-core machine; 20,000 took textrank 13 GB.
MAX_SENTENCES = 2000


class ExtractiveSummarizer:
    """One extractive method, built with its options and the project's fitted statistics (module
    docstring); `name` is the method's."""

    def __init__(self, name: str, method: Method) -> None:
        self.name = name
        self.method = method
        # where a note goes when a text is cut to MAX_SENTENCES sentences (None: said nowhere)
        self.warn: Callable[[str], None] | None = None

    @classmethod
    def open(cls, project: Project, name: str, options: dict[str, Any], key: str = "method") -> ExtractiveSummarizer:
        """Method `name` with `options` over the project's `extractive.options.<name>`."""
        from sumpipe.extractive.methods import METHODS, build_method

        if name not in METHODS.names():  # the registry's error would list the oracle too, which is refused here
            usable = [n for n in METHODS.names() if not METHODS.get(n, key).uses_reference]
            raise SumpipeError(f"{key}: unknown extractive method {name!r} (known: {', '.join(usable)})")
        method_cls = METHODS.get(name, key)
        if method_cls.uses_reference:
            raise SumpipeError(f"{key}: {name} reads the reference summary; it cannot summarize new text")
        corpus, state = _fitted(project, method_cls)
        merged = {**project.params.extractive.options.get(name, {}), **options}
        return cls(name, build_method(name, merged, corpus, state, key))

    def __repr__(self) -> str:
        return f"<ExtractiveSummarizer {self.name}>"

    @overload
    def summarize(self, texts: str, *, sentences: int | None = ...,  # type: ignore[overload-overlap]
                  max_tokens: int | None = ...) -> Summary: ...

    @overload
    def summarize(self, texts: Sequence[str], *, sentences: int | None = ...,
                  max_tokens: int | None = ...) -> list[Summary]: ...

    def summarize(self, texts: str | Sequence[str], *, sentences: int | None = 3,
                  max_tokens: int | None = None) -> Summary | list[Summary]:
        """The summary of one text, or of each text of a list: at most `sentences` sentences and
        `max_tokens` tokens (None: no cap; one of them is needed). A text with nothing left to
        summarise gets an empty `Summary` with its `error` (a SumpipeError for a single text)."""
        import sumpipe.arguments as arguments  # not `from sumpipe import`: the package is the API
        from sumpipe.extractive.methods import Analyzer, Limit

        documents, single = arguments.texts(texts)  # a wrong type or a NUL byte: one line (sumpipe.arguments)
        sentences = arguments.optional_whole(sentences, "sentences", 1)
        max_tokens = arguments.optional_whole(max_tokens, "max_tokens", 1)
        if sentences is None and max_tokens is None:
            raise SumpipeError("give sentences or max_tokens")
        limit = Limit(sentences=sentences, tokens=max_tokens)
        analyzer = Analyzer()  # one stem cache for the whole call
        out = [self._one(text, limit, analyzer) for text in documents]
        if single:
            if out[0].error:
                raise SumpipeError(f"the input has {NO_TEXT}")
            return out[0]
        return out

    def _one(self, raw: str, limit: Any, analyzer: Any) -> Summary:
        from sumpipe.decode.batches import cap_raw
        from sumpipe.text.preprocess import preprocess_sentences

        pairs = preprocess_sentences(cap_raw(raw))
        text = "\n".join(line for _, line in pairs)
        if not any(c.isalnum() for c in text):
            return Summary([], "", None, [], error=text_error(raw), source=raw)
        if len(pairs) > MAX_SENTENCES:  # like a text past MAX_RAW_CHARS: the start is summarised, and it is said
            if self.warn is not None:
                self.warn(f"note: {len(pairs):,} sentences; the first {MAX_SENTENCES:,} are ranked (graph and "
                          "matrix methods compare every pair of sentences)")
            pairs = pairs[:MAX_SENTENCES]
            text = "\n".join(line for _, line in pairs)
        doc = analyzer.parse(text)  # one sentence per pair: preprocessed lines are never empty
        selected = self.method.select(doc, limit)
        tokens = [token for i in selected for token in doc.sentences[i]]
        return Summary(tokens, doc.text(selected), None, [token for sentence in doc.sentences for token in sentence],
                       sentences=list(selected), source=raw, prose=" ".join(pairs[i][0] for i in selected))


def _fitted(project: Project, method_cls: type[Method]) -> tuple[Any, Any]:
    """(corpus statistics, the method's own state) from the project's last `dvc repro`, each None when
    the method needs none or the file is not there (`ngram`'s table is required)."""
    from sumpipe.extractive.methods.lsa_collection import SPACE_FILE
    from sumpipe.extractive.stage import CORPUS_FILE, load_corpus, load_state
    from sumpipe.vocab.ngrams import NGRAMS_FILE

    paths = project.params.paths
    rooted = dataclasses.replace(paths, vocab=str(project.path(paths.vocab)),
                                 extractive=str(project.path(paths.extractive)))
    corpus = state = None
    if method_cls.uses_corpus and (Path(rooted.extractive) / CORPUS_FILE).is_file():
        corpus = load_corpus(rooted.extractive)
    if method_cls.needs == "ngrams":
        table = Path(rooted.vocab) / NGRAMS_FILE
        if not table.is_file():
            raise SumpipeError(f"method ngram needs the vocab stage's 3-gram table: run it from the project folder "
                               f"after `dvc repro` ({table} not found)")
        state = load_state("ngrams", rooted)
    elif method_cls.needs and (method_cls.needs != "space" or (Path(rooted.extractive) / SPACE_FILE).is_file()):
        state = load_state(method_cls.needs, rooted)
    return corpus, state


def load_extractive(method: str, *, project: str | os.PathLike[str] = ".", params: str | os.PathLike[str] | None = None,
                    **options: Any) -> ExtractiveSummarizer:
    """An extractive summarizer: `method` (a name of the extractive-method registry, e.g. "textrank")
    with its keyword `options` (e.g. `threshold=0.2` for lexrank) over params.yaml's
    `extractive.options.<method>`. `project` and `params` as for `sumpipe.load`: the corpus statistics
    of the project's last `dvc repro` are used when present."""
    import sumpipe.arguments as arguments  # not `from sumpipe import`: the package is the API

    method = arguments.text(method, "method")
    project, params = arguments.path(project, "project"), arguments.optional_path(params, "params")
    return ExtractiveSummarizer.open(open_project(project, params), method, options)


def summarize_text(source: str, method_name: str, sentences: int | None, tokens: int | None,
                   params_path: str | Path | None = None, as_tokens: bool = False,
                   warn: Callable[[str], None] | None = None) -> str:
    """`sumpipe summarize`: the summary of file `source` ("-" = stdin) as text (module docstring).
    `warn` gets a note when the input is cut to MAX_SENTENCES sentences."""
    from sumpipe.decode.interactive import read_input

    if sentences is None and tokens is None:
        raise SumpipeError("give --sentences or --max-tokens")
    summarizer = ExtractiveSummarizer.open(open_project(".", params_path), method_name, {}, key="--method")
    if warn is not None:
        name = "stdin" if source == "-" else source
        summarizer.warn = lambda note: warn(note.replace("note: ", f"note: {name}: ", 1))
    summary = summarizer.summarize([read_input(source, MAX_BYTES)], sentences=sentences, max_tokens=tokens)[0]
    if summary.error:
        raise SumpipeError(f"{'stdin' if source == '-' else source}: {summary.error}")
    return summary.tokenized if as_tokens else summary.text
