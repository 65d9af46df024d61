"""The extractive methods' options (sumpipe.extract.options): typed and bounded before a method is built."""

from __future__ import annotations

import inspect

import pytest

from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.extract.options import OPTION_TYPES, checked_options
from sumpipe.extractive.scorers import METHODS, build_method


def test_every_option_type_belongs_to_a_method_and_matches_its_constructor() -> None:
    for name, options in OPTION_TYPES.items():
        assert name in METHODS
        # the shared corpus statistics and a method's fitted state (`needs`) are not options
        accepted = set(inspect.signature(METHODS[name]).parameters) - {"corpus", "analyzer", METHODS[name].needs}
        assert set(options.__dataclass_fields__) == accepted, name


@pytest.mark.parametrize(("method", "options", "message"), [
    ("lexrank", {"threshold": "abc"}, "threshold: expected float, got 'abc'"),
    ("lexrank", {"threshold": 1.5}, r"threshold: must be in \[0, 1\]"),
    ("nmf", {"topics": -1}, r"topics: must be in \[1, 1000\]"),
    ("nmf", {"iterations": 10**9}, r"iterations: must be in \[1, 100000\]"),
    ("textrank", {"damping": "abc"}, "damping: expected float"),
    ("textrank", {"damping": 1.0}, r"damping: must be in \(0, 1\)"),
    ("lsa", {"dimensions": -2}, r"dimensions: must be in \[0, 1000\]"),
    ("ngram", {"first_k": -1}, r"first_k: must be in \[0, 1000\]"),
    ("klsum", {"alpha": float("nan")}, "alpha: must be in"),
    ("lead", {"k": 3}, "k: unknown key"),
])
def test_bad_option_is_a_one_line_error(method, options, message) -> None:
    with pytest.raises(ConfigError, match=message):
        checked_options(method, options)
    with pytest.raises(SumpipeError, match=f"extractive method '{method}': bad option {message}"):
        build_method(method, options)


def test_only_given_options_are_passed_ints_become_floats() -> None:
    assert checked_options("lexrank", {"threshold": 0}) == {"threshold": 0.0}
    assert build_method("lexrank", {"threshold": 0}).threshold == 0.0
    assert build_method("lexrank").damping == 0.85  # the method's own default stays the source
