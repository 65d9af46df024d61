"""Edmundson: cue, key, title and location features."""

import numpy as np

from sumpipe.extractive.methods import Analyzer
from sumpipe.extractive.methods.edmundson import Edmundson


def test_features_by_hand():
    doc = Analyzer().parse("storm warning issued\nhardly any storm damage\nimportant storm news\nmarkets rose")
    method = Edmundson(bonus_words=["important"], stigma_words=["hardly"])
    features = method.features(doc)
    np.testing.assert_array_equal(features[:, 0], [0, -1, 1, 0])            # cue
    np.testing.assert_array_equal(features[:, 1], [1, 1, 1, 0])             # key: "storm" (3 of max 3)
    np.testing.assert_array_equal(features[:, 2], [3, 1, 1, 0])             # title = sentence 1's words
    np.testing.assert_array_equal(features[:, 3], [1, 0, 0, 1])             # first and last sentence
    np.testing.assert_array_equal(method.scores(doc), features.sum(axis=1))


def test_weights_from_params():
    doc = Analyzer().parse("storm warning issued\nhardly any storm damage\nimportant storm news\nmarkets rose")
    only_cue = Edmundson(bonus_words=["important"], stigma_words=["hardly"], key_weight=0, title_weight=0,
                         location_weight=0)
    np.testing.assert_array_equal(only_cue.scores(doc), [0, -1, 1, 0])
