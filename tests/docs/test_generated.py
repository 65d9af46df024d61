"""Marked blocks of Markdown files: found with markdown-it (never inside code), rewritten whole, and
one-line errors for a malformed or unknown block."""

from __future__ import annotations

from pathlib import Path

import pytest

from sumpipe.docs.generated import find_blocks, rewrite, update_files
from sumpipe.errors import SumpipeError

DOC = """# Title

Some prose.

<!-- sumpipe:generated numbers -->
| old | table |
<!-- /sumpipe:generated -->

```markdown
<!-- sumpipe:generated numbers -->
quoted in a code fence: not a block
<!-- /sumpipe:generated -->
```

- a list item

  <!-- sumpipe:generated words -->

  old words

  <!-- /sumpipe:generated -->
"""

RENDERED = {"numbers": "| n |\n|---|\n| 1 |", "words": "new words"}


def test_blocks_are_found_outside_code_only() -> None:
    assert [(b.name, b.start, b.end) for b in find_blocks(DOC)] == [("numbers", 4, 6), ("words", 16, 20)]


def test_a_block_is_replaced_whole_and_a_rewrite_is_idempotent() -> None:
    new, changed = rewrite(DOC, RENDERED.__getitem__, RENDERED)
    assert changed == ["numbers", "words"]
    assert "<!-- sumpipe:generated numbers -->\n\n| n |\n|---|\n| 1 |\n\n<!-- /sumpipe:generated -->" in new
    assert "| old | table |" not in new and "old words" not in new and "new words" in new
    assert "quoted in a code fence: not a block" in new                   # the fence is left alone
    assert rewrite(new, RENDERED.__getitem__, RENDERED) == (new, [])


@pytest.mark.parametrize(("text", "message"), [
    ("a\n\n<!-- sumpipe:generated x -->\n\nb\n", "doc.md:3: generated block 'x' has no end marker"),
    ("a\n\n<!-- /sumpipe:generated -->\n", "doc.md:3: an end marker without a start marker"),
    ("<!-- sumpipe:generated x -->\n\n<!-- sumpipe:generated y -->\n\n<!-- /sumpipe:generated -->\n",
     "doc.md:3: a generated block starts inside 'x' (line 1), which has no end marker"),
    ("<!-- sumpipe:generated nope -->\n<!-- /sumpipe:generated -->\n",
     "doc.md:1: unknown generated block 'nope' (known: numbers, words)"),
])
def test_malformed_or_unknown_blocks_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(SumpipeError) as info:
        rewrite(text, RENDERED.__getitem__, RENDERED, "doc.md")
    assert str(info.value) == message


def test_update_files_reports_the_stale_blocks_and_writes_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(DOC)
    (tmp_path / "b.md").write_text("no blocks here\n")
    files = [tmp_path / "a.md", tmp_path / "b.md"]
    assert update_files(files, RENDERED.__getitem__, RENDERED, write=False) == {tmp_path / "a.md": ["numbers", "words"]}
    assert (tmp_path / "a.md").read_text() == DOC                           # a check writes nothing
    update_files(files, RENDERED.__getitem__, RENDERED, write=True)
    assert update_files(files, RENDERED.__getitem__, RENDERED, write=False) == {}
