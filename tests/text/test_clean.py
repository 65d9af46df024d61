"""Removing extra symbols from cased text (`sumpipe.text.clean`)."""

from __future__ import annotations

import pytest

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
