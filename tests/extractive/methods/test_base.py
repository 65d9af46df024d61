"""Choosing ranked sentences under a budget."""

import pytest

from sumpipe.errors import SumpipeError
from sumpipe.extractive.methods import Limit, take


def test_sentence_limit_keeps_the_best_in_document_order():
    assert take([3, 0, 2, 1], [5, 5, 5, 5], Limit(sentences=2)) == [0, 3]


def test_token_limit_skips_a_sentence_that_overflows_and_tries_shorter_ones():
    # best (index 2, 8 tokens) fits, next (index 0, 5) would overflow 10, index 1 (2 tokens) fits
    assert take([2, 0, 1], [5, 2, 8], Limit(tokens=10)) == [1, 2]


def test_both_limits_and_never_over_budget():
    lengths = [4, 4, 4, 4]
    chosen = take([3, 2, 1, 0], lengths, Limit(sentences=3, tokens=9))
    assert chosen == [2, 3] and sum(lengths[i] for i in chosen) <= 9


def test_when_nothing_fits_the_best_sentence_is_returned_for_the_caller_to_cut():
    assert take([1, 0], [30, 20], Limit(tokens=10)) == [1]


def test_greedy_generators_are_consumed_lazily():
    steps = []

    def order():
        for i in range(100):
            steps.append(i)
            yield i

    assert take(order(), [1] * 100, Limit(sentences=3)) == [0, 1, 2]
    assert len(steps) == 4  # the fourth step only finds the limit reached


def test_a_limit_needs_a_positive_cap():
    with pytest.raises(SumpipeError):
        Limit()
    with pytest.raises(SumpipeError, match="tokens"):
        Limit(tokens=0)
