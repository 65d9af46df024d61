"""The greedy ROUGE oracle: finds the reference's sentences, beats every method, needs the reference."""

import gzip
import json

import numpy as np
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.evaluate.rouge import FastRouge, score_pairs
from sumpipe.extractive.methods import METHODS, Analyzer, Limit, build_method, fit_corpus
from sumpipe.extractive.methods.oracle import GreedyOracle

TEXT = "the storm hit the coast\nmarkets rose today\nthousands lost power after the storm\nsports news"


def test_picks_the_sentences_the_reference_is_made_of():
    doc = Analyzer().parse(TEXT, reference="thousands lost power after the storm hit the coast")
    assert GreedyOracle().select(doc, Limit(sentences=3)) == [0, 2]   # stops: a third sentence lowers ROUGE


def test_respects_the_token_budget_and_falls_back_to_lead():
    doc = Analyzer().parse(TEXT, reference="thousands lost power after the storm hit the coast")
    assert GreedyOracle().select(doc, Limit(tokens=7)) == [2]
    unrelated = Analyzer().parse(TEXT, reference="zebra")
    assert GreedyOracle().select(unrelated, Limit(sentences=2)) == [0, 1]


def test_needs_the_reference():
    with pytest.raises(SumpipeError, match="reference"):
        GreedyOracle().select(Analyzer().parse(TEXT), Limit(sentences=1))


def _mean_rouge(docs, selections, references):
    scores = score_pairs([d.text(s) for d, s in zip(docs, selections)], references,
                         scorer=FastRouge(("rouge1", "rouge2")))
    return scores["rouge1_fmeasure"].to_numpy() + scores["rouge2_fmeasure"].to_numpy()


def _fitted_state(needs, sources, references, docs):
    """The state a method `needs`, fitted on the same 40 stories: their 3-gram table or LSA space."""
    from sumpipe.extractive.methods.lsa_collection import LsaSpace, term_stream
    from sumpipe.vocab.build import CorpusCounter
    from sumpipe.vocab.ngrams import NgramTable

    if needs == "ngrams":
        counter = CorpusCounter(3)
        counter.add(sources, references)
        keys, counts = counter.ngrams.result()
        return NgramTable(n=3, keys=keys[counts >= 2], counts=counts[counts >= 2], words=counter.words)
    if needs == "space":
        return LsaSpace.fit([term_stream(d) for d in docs])
    return None


@pytest.mark.shared
def test_oracle_beats_every_method_on_cnn_stories(shared_data):
    from sumpipe.text.preprocess import preprocess_many

    path = shared_data / "cnndm" / "cnn_stories.jsonl.gz"
    rows = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8")][:40]
    sources = [s for s, _ in preprocess_many([r["source"] for r in rows])]
    references = [s for s, _ in preprocess_many([r["reference"] for r in rows])]
    a = Analyzer()
    docs = [a.parse(s, r, str(i)) for i, (s, r) in enumerate(zip(sources, references))]
    corpus = fit_corpus(docs)
    limit = Limit(sentences=3)
    oracle = _mean_rouge(docs, [GreedyOracle().select(d, limit) for d in docs], references)
    for name in (n for n in METHODS.names() if n != "oracle"):
        state = _fitted_state(METHODS.get(name, "method").needs, sources, references, docs)
        method = build_method(name, corpus=corpus, state=state)
        other = _mean_rouge(docs, [method.select(d, limit) for d in docs], references)
        assert oracle.mean() > other.mean(), name
        assert np.mean(oracle >= other - 1e-9) >= 0.9, name   # greedy: not optimal on every document
