"""Repairing mis-decoded text and folding characters to ASCII (`sumpipe.text.ascii`)."""

from __future__ import annotations

import pytest

from sumpipe.text.ascii import repair_encoding, to_ascii


@pytest.mark.parametrize(("text", "expected"), [
    ("£20", "# 20"),
    ("won\u2019t \u201cquote\u201d \u2014 1990\u20132000 \u2026", "won't \"quote\"  --  1990-2000 ..."),
    ("8\u00bd years", "8 1/2 years"),
    ("café naïve Ñ", "cafe naive N"),
    ("日本 \u00a9 \u20ac5 x", "  5 x"),
    ("soft\u00adhyphen zero\u200bwidth", "softhyphen zerowidth"),
    ("plain", "plain"),
])
def test_to_ascii(text: str, expected: str) -> None:
    assert to_ascii(text) == expected
    assert to_ascii(text).isascii()


@pytest.mark.parametrize(("text", "expected", "repaired"), [
    ("caf\u00c3\u00a9 \u00e2\u20ac\u201d \u00c2\u00a3220", "café — £220", True),   # UTF-8 read as cp1252
    ("Rodr\u00c3\xadguez", "Rodríguez", True),
    ("bad \ufffd byte", "bad  byte", True),
    ("café é» fine", "café é» fine", False),    # genuine non-ASCII is left alone
    ("ascii", "ascii", False),
])
def test_repair_encoding(text: str, expected: str, repaired: bool) -> None:
    assert repair_encoding(text) == (expected, repaired)
