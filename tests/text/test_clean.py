"""Removing extra symbols (cased text) and folding characters to ASCII."""

from __future__ import annotations

import pytest

from sumpipe.text.ascii import repair_encoding, to_ascii
from sumpipe.text.clean import remove_extra_symbols


@pytest.mark.parametrize(("text", "expected"), [
    ("WASHINGTON (CNN) -- Doctors", "WASHINGTON Doctors"),
    ("(CNN Student News) -- Welcome", " Welcome"),
    ("Seoul (CNN)South Korea", "Seoul South Korea"),
    ("LONDON, England (Reuters) -- Harry", "LONDON, England (Reuters) -- Harry"),  # name kept
    ("the -LRB- UNK -RRB- and -lsb- x -rsb- `` quoted ''", "the UNK and x quoted "),
    ("5\\/10 \\*", "5/10 *"),
    ("good<br /><br />Great &amp; cheap &quot;stuff&quot; &#39;ok&#39;", 'good\n\nGreat & cheap "stuff" \'ok\''),
    ("a <b>bold</b> <a href=\"x\">link</a>", "a bold link "),
    ("a <unk> b &lt;unk&gt; c", "a unk b unk c"),
    ("a\r\nb\rc\u2028d\t e   f", "a\nb\nc\nd e f"),
    ("x < y and y > z", "x < y and y > z"),     # not tags
])
def test_remove_extra_symbols(text: str, expected: str) -> None:
    assert remove_extra_symbols(text) == expected


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
