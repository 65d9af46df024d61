"""Weighted word frequency on the worked example (Peter and Elizabeth) of Text Summarizing (blog, 2023)."""

import numpy as np

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.wordfreq import WordFrequency, term_weights

# The blog post's four sentences, preprocessed (lowercase, punctuation split off).
TEXT = """peter and elizabeth took a taxi to attend the night party in the city .
while in the party , elizabeth collapsed and was rushed to the hospital .
since she was diagnosed with a brain injury , the doctor told peter to stay besides her until she gets well .
therefore , peter stayed with her at the hospital for 3 days without leaving ."""


def test_weights_are_counts_over_the_largest_count():
    np.testing.assert_allclose(term_weights(np.array([[3.0, 1.0], [0.0, 1.0]])), [1.0, 2 / 3])


def test_the_blog_example_with_the_posts_word_list():
    # The post's word list also drops "since" and "therefore". Its table prints 3.99, 2.67, 3.97, 3.33:
    # sentence 3 counts "stay" at 0.33 although the word table gives 0.67 (stay + stayed). Done right,
    # sentence 3 (13/3) beats sentence 1 (4).
    analyzer = Analyzer(stop_words=Analyzer().stop_words | {"since", "therefore"})
    doc = analyzer.parse(TEXT)
    scores = WordFrequency().scores(doc)
    np.testing.assert_allclose(scores, [4.0, 8 / 3, 13 / 3, 10 / 3])
    assert WordFrequency().select(doc, Limit(sentences=1)) == [2]
    assert WordFrequency().select(doc, Limit(sentences=2)) == [0, 2]   # the post's "first with third"


def test_the_blog_example_with_the_project_stop_words():
    # NLTK's list keeps "since" and "therefore" as content words: 1/3 more for sentences 3 and 4.
    np.testing.assert_allclose(WordFrequency().scores(Analyzer().parse(TEXT)), [4.0, 8 / 3, 14 / 3, 11 / 3])
