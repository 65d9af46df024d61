"""`sumpipe summarize`: raw text -> an extractive summary with any method of `sumpipe.extractive.scorers`.

The text goes through the pipeline's preprocessing (as `sumpipe decode` does); the method ranks the
sentences and the best ones within the budget come out in document order, as the input wrote them
(after markup removal: `sumpipe.text.preprocess.preprocess_sentences`), joined by spaces; with
`as_tokens` in the pipeline's preprocessed form instead (lowercased tokens, one sentence per line).
Methods that use corpus statistics (idf, entropy weights) read `<paths.extractive>/corpus.parquet`
from the last `dvc repro` when params.yaml and the file are there, and otherwise take them from the
input alone (every term equally rare); `lsa_collection` reads the collection LSA space from the same
folder (else the input's sentences are the collection), and `ngram` (seed 001 Alg. 1) needs the vocab
stage's 3-gram table (`<paths.vocab>/ngrams.parquet`). The oracle needs a reference and is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sumpipe.errors import SumpipeError

MAX_BYTES = 20_000_000
# Sentences of one input: textrank's similarity matrix is S x S, LSA and NMF factorise S columns. At 2,000
# the slowest method (nmf) takes ~30 s and 0.5 GB on a busy 2-core machine; 20,000 took textrank 13 GB.
MAX_SENTENCES = 2000


def summarize_text(source: str, method_name: str, sentences: int | None, tokens: int | None,
                   params_path: str | Path = "params.yaml", as_tokens: bool = False,
                   warn: Callable[[str], None] | None = None) -> str:
    """The summary of file `source` ("-" = stdin) as text (module docstring). `warn` gets a note when
    the input is cut to MAX_SENTENCES sentences."""
    from sumpipe.decode.api import cap_raw
    from sumpipe.decode.interactive import NO_TEXT, read_input
    from sumpipe.extractive.scorers import SCORERS, Analyzer, Limit, build_method
    from sumpipe.extractive.scorers.lsa_collection import SPACE_FILE
    from sumpipe.text.preprocess import preprocess_sentences

    cls = SCORERS.get(method_name, "--method")
    if cls.uses_reference:
        raise SumpipeError(f"--method: {method_name} reads the reference summary; it cannot summarize new text")
    if sentences is None and tokens is None:
        raise SumpipeError("give --sentences or --max-tokens")
    options, corpus, state = {}, None, None
    if Path(params_path).is_file():
        from sumpipe.config import load_params
        from sumpipe.extractive.systems import CORPUS_FILE, load_corpus, load_state

        p = load_params(params_path)
        options = p.extractive.options.get(method_name, {})
        if cls.uses_corpus and (Path(p.paths.extractive) / CORPUS_FILE).is_file():
            corpus = load_corpus(p.paths.extractive)
        if cls.needs and (cls.needs != "space" or (Path(p.paths.extractive) / SPACE_FILE).is_file()):
            state = load_state(cls.needs, p.paths)
    if cls.needs == "ngrams" and state is None:
        raise SumpipeError(f"--method ngram needs the vocab stage's 3-gram table: run it from the project "
                           f"folder after `dvc repro` (params.yaml paths.vocab/ngrams.parquet); no {params_path}")
    pairs = preprocess_sentences(cap_raw(read_input(source, MAX_BYTES)))
    text = "\n".join(line for _, line in pairs)
    name = "stdin" if source == "-" else source
    if not any(c.isalnum() for c in text):
        raise SumpipeError(f"{name}: {NO_TEXT}")
    if len(pairs) > MAX_SENTENCES:  # like a text past MAX_RAW_CHARS: the start is summarised, and it is said
        if warn is not None:
            warn(f"note: {name}: {len(pairs):,} sentences; the first {MAX_SENTENCES:,} are ranked (graph and matrix "
                 "methods compare every pair of sentences)")
        pairs = pairs[:MAX_SENTENCES]
        text = "\n".join(line for _, line in pairs)
    doc = Analyzer().parse(text)  # one sentence per pair: preprocessed lines are never empty
    selected = build_method(method_name, options, corpus, state).select(doc, Limit(sentences=sentences, tokens=tokens))
    if as_tokens:
        return doc.text(selected)
    return " ".join(pairs[i][0] for i in selected)
