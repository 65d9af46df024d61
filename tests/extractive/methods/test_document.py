"""The document view every extractive method reads: content terms, stems, counts."""

import numpy as np

from sumpipe.extractive.methods import Analyzer


def test_content_terms_drop_stop_words_numbers_and_punctuation_and_are_stemmed():
    a = Analyzer()
    assert a.terms("peter stayed with her for 3 days , without leaving .".split()) == \
        ["peter", "stay", "day", "without", "leav"]
    assert a.term(",") == ""          # punctuation: not a word
    assert a.term("the") is None       # stop word: a word without a term
    assert a.term("12.40") is None     # number


def test_counts_terms_and_words():
    doc = Analyzer().parse("the cat sat .\ncats sat on 2 mats\n\n")
    assert doc.n_sentences == 2                                      # the empty line is dropped
    assert doc.terms == ["cat", "sat", "mat"]
    np.testing.assert_array_equal(doc.counts, [[1, 1, 0], [1, 1, 1]])
    assert doc.words == [[-1, 0, 1], [0, 1, -1, 2]]                 # "the", "on" are -1; "2" and "." left out
    np.testing.assert_array_equal(doc.lengths, [4, 5])
    assert doc.text([1]) == "cats sat on 2 mats"


def test_empty_and_wordless_documents():
    empty = Analyzer().parse("")
    assert empty.n_sentences == 0 and empty.counts.shape == (0, 0)
    wordless = Analyzer().parse("the , of .\n1 2 3")
    assert wordless.n_sentences == 2 and wordless.n_terms == 0 and wordless.counts.shape == (2, 0)


def test_reference_and_key_are_kept():
    doc = Analyzer().parse("a b c", reference="x y", key="id-1")
    assert doc.reference == ["x", "y"] and doc.key == "id-1"
