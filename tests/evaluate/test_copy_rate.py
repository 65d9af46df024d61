"""The copy rate: summary tokens outside an output vocabulary, by hand."""

import math

from sumpipe.config import params_from_dict
from sumpipe.evaluate.copy_rate import OutputVocabularies, copy_figures, output_vocabularies


def test_the_shares_are_pooled_over_every_token_of_every_text() -> None:
    vocabulary = frozenset({"the", ".", "of"})
    # 5 tokens, 2 outside ("walrus", "zebra"), then 3 tokens, 1 outside ("index"): 3 of 8, pooled; of those
    # three, "walrus" and "index" are in their own text's source ("zebra" is not: written, not copied)
    texts = ["the walrus of the zebra", "the index\n."]
    sources = ["a walrus swam .", "the index of zebra"]
    assert copy_figures(texts, sources, vocabulary) == {"copy_rate": 37.5, "in_source": 200 / 3}
    assert copy_figures(["the ."], ["x"], vocabulary)["copy_rate"] == 0.0
    assert math.isnan(copy_figures(["the ."], ["x"], vocabulary)["in_source"])  # nothing outside: no share
    assert math.isnan(copy_figures(["", "  "], ["x", "y"], vocabulary)["copy_rate"])  # no token: no figure


def test_each_model_its_own_vocabulary_the_rest_the_transformers() -> None:
    params = params_from_dict({
        "model": {"vocab_size": 1000},
        "families": {"rnn": {"vocab_size": 300}},
        "models": {"A": {"family": "transformer", "input": "first40"},
                   "Asmall": {"family": "transformer", "input": "first40", "arch": {"vocab_size": 500}},
                   "B": {"family": "rnn", "input": "first40"},
                   "C": {"family": "bert2stage", "input": "first40"}},
        "extract": {"budgets": [{"method": "first", "tokens": 40}]}})
    sizes = output_vocabularies(params)
    assert sizes == OutputVocabularies(shared=1000, models={"A": 1000, "Asmall": 500, "B": 300})
    # the sentencepiece model and every system that is not a model: the transformer's 1,000 words
    assert sizes.size_of("C") == (1000, False) and sizes.size_of(None) == (1000, False)
    assert sizes.size_of("B") == (300, True)
