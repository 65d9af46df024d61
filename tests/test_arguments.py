"""The Python API's argument checks (sumpipe.arguments): each wrong type is one SumpipeError line naming
the argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from sumpipe import arguments
from sumpipe.errors import SumpipeError


@pytest.mark.parametrize(("value", "message"), [
    (b"the cat", "texts: expected a string or a list of strings, got bytes (decode them first: data.decode('utf-8'))"),
    (Path("a.txt"), "texts: expected a string or a list of strings, got a path ('a.txt'); read the file first: "
                    "Path(...).read_text()"),
    (None, "texts: expected a string or a list of strings, got None"),
    (5, "texts: expected a string or a list of strings, got int 5"),
    ({"a": "b"}, "texts: expected a string or a list of strings, got dict {'a': 'b'}"),
    (["a", 3], "texts[1]: expected a string, got int 3"),
    (["a", "b\0c"], "texts[1]: holds a NUL byte (character 1): binary data, not text (the command refuses such a "
                    "file too)"),
])
def test_texts_refuses_what_is_not_text(value, message) -> None:
    with pytest.raises(SumpipeError) as refused:
        arguments.texts(value)
    assert str(refused.value) == message


def test_texts_takes_a_string_a_list_a_tuple_and_a_generator() -> None:
    assert arguments.texts("a") == (["a"], True)
    assert arguments.texts(("a", "b")) == (["a", "b"], False)
    assert arguments.texts(t for t in ["x"]) == (["x"], False)
    assert arguments.references(["a", ["b", "c"]]) == ["a", ["b", "c"]]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: arguments.whole(True, "sentences", 1), "sentences: expected an int, got bool True"),
    (lambda: arguments.whole(2.5, "max_tokens", 1), "max_tokens: expected an int, got float 2.5"),
    (lambda: arguments.whole(0, "threads", 1), "threads: must be >= 1, got 0"),
    (lambda: arguments.flag("no", "use_stemmer"), "use_stemmer: expected True or False, got str 'no'"),
    (lambda: arguments.fraction(float("nan"), "confidence"), "confidence: must be in (0, 1), got nan"),
    (lambda: arguments.path(b"models", "project"), "project: expected a folder or file name (str or Path), got "
                                                   "bytes (decode them first: data.decode('utf-8'))"),
    (lambda: arguments.path("a\0b", "params"), "params: holds a NUL byte, which no file name can"),
    (lambda: arguments.seeds(5), "seeds: expected a list of seeds (ints), got int 5"),
    (lambda: arguments.seeds([1, -2]), "seeds[1]: must be >= 0, got -2"),
    (lambda: arguments.device("tpu"), "device: must be one of 'auto', 'cpu', 'cuda', got str 'tpu'"),
    (lambda: arguments.references([["a", 1]]), "references[0][1]: expected a string, got int 1"),
])
def test_each_kind_of_argument(call, message) -> None:
    with pytest.raises(SumpipeError) as refused:
        call()
    assert str(refused.value) == message


def test_right_values_pass_unchanged() -> None:
    assert arguments.whole(3, "beam", 1) == 3 and arguments.optional_whole(None, "seed") is None
    assert arguments.flag(False, "details") is False and arguments.fraction(0.95, "confidence") == 0.95
    assert arguments.path(Path("m"), "model") == Path("m") and arguments.device(None) is None
