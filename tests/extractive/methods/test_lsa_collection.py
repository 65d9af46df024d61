"""Collection-level LSA (Sokol 2022): one truncated-SVD space for the collection, sentences by cosine."""

import numpy as np
import pytest

from sumpipe.extractive.methods import Analyzer, Limit, build_method
from sumpipe.extractive.methods.lsa_collection import LsaSpace, cosine_to, term_stream

COLLECTION = [
    "the storm hit the coast .\nthe storm cut power to homes .\npower lines fell in the storm .",
    "the senate passed the budget .\nthe budget vote was close .\nsenators argued over the budget .",
    "markets rose on monday .\ninvestors bought shares .\nshares and markets rose again .",
    "the storm flooded homes .\nrepairs to power lines take weeks .",
    "the budget cuts taxes .\nthe senate vote came late .",
]


def test_space_is_truncated_svd_of_the_log_entropy_matrix():
    analyzer = Analyzer()
    streams = [term_stream(analyzer.parse(t)) for t in COLLECTION]
    space = LsaSpace.fit(streams, dimensions=2)
    assert space.dimensions == 2 and space.components.shape == (2, len(space.terms))
    # the same subspace as numpy's exact SVD of the weighted document-term matrix
    counts = np.array([[s.count(t) for t in space.terms] for s in streams], dtype=float)
    weighted = np.log1p(counts) * space.entropy
    _, sigma, vt = np.linalg.svd(weighted, full_matrices=False)
    np.testing.assert_allclose(np.abs(space.components @ vt[:2].T), np.eye(2), atol=1e-6)
    np.testing.assert_allclose(space.project(counts, space.terms), weighted @ space.components.T)
    assert np.linalg.norm(space.project(counts, space.terms)[0]) == pytest.approx(
        np.linalg.norm(weighted[0] @ vt[:2].T))
    assert LsaSpace.fit(streams).dimensions == 4  # k capped at n - 1 on a 5-document collection


def test_space_round_trips_through_columns():
    analyzer = Analyzer()
    space = LsaSpace.fit([term_stream(analyzer.parse(t)) for t in COLLECTION], dimensions=3)
    columns = space.to_columns()
    back = LsaSpace.from_columns(columns["term"], columns["entropy"], columns["loadings"])
    assert back.terms == space.terms
    np.testing.assert_array_equal(back.components, space.components)
    np.testing.assert_array_equal(back.entropy, space.entropy)


def test_cosine_with_zero_rows():
    np.testing.assert_allclose(cosine_to(np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]), np.array([2.0, 0.0])),
                               [1.0, 0.0, 1 / np.sqrt(2)])


def test_sentence_closest_to_its_document_in_the_space_is_chosen():
    analyzer = Analyzer()
    space = LsaSpace.fit([term_stream(analyzer.parse(t)) for t in COLLECTION], dimensions=2)
    method = build_method("lsa_collection", {}, None, space)
    doc = analyzer.parse("the storm hit homes and power lines .\nmarkets rose .\nthe storm cut power again .")
    scores = method.scores(doc)
    assert scores[1] < min(scores[0], scores[2])          # the off-topic market sentence scores lowest
    assert method.select(doc, Limit(sentences=2)) == [0, 2]
    unknown = analyzer.parse("zebras graze quietly .\nthe storm cut power .")
    assert method.scores(unknown)[0] == 0.0               # no term the collection knows: no coordinates


def test_without_a_space_the_documents_sentences_are_the_collection():
    doc = Analyzer().parse(COLLECTION[0] + "\nmarkets rose .")
    scores = build_method("lsa_collection").scores(doc)
    assert scores.shape == (4,) and int(np.argmin(scores)) == 3
