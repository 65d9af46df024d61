"""Generated blocks of Markdown files: found between two HTML comments, rewritten from their renderer.

    <!-- sumpipe:generated results -->

    | system | reads | R-1 | ...                  (whatever `blocks.BLOCKS["results"]` renders)

    <!-- /sumpipe:generated -->

Markers are HTML blocks as markdown-it parses them (CommonMark): a comment alone on its lines, so a
marker quoted inside a code fence or inline code is text, not a marker. Everything between a start
marker and the next end marker belongs to the block and is replaced whole: a blank line, the
rendered text, a blank line (invisible on GitHub; the comments are too). A block name no renderer
knows, an end without a start, or a start without an end is a one-line `SumpipeError` naming the file
and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from sumpipe.errors import SumpipeError

START = re.compile(r"<!--\s*sumpipe:generated\s+([\w.-]+)\s*-->")
END = re.compile(r"<!--\s*/sumpipe:generated\s*-->")

Render = Callable[[str], str]  # block name -> its text


@dataclass(frozen=True)
class Block:
    """A generated block: its name and the 0-based lines of its start and end markers."""

    name: str
    start: int
    end: int


def find_blocks(text: str, where: str = "") -> list[Block]:
    """The marked blocks of Markdown `text`, in order (`where` names the file in errors)."""
    from markdown_it import MarkdownIt

    blocks: list[Block] = []
    open_at: tuple[str, int] | None = None
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "html_block" or token.map is None:
            continue
        line = token.map[0]
        if match := START.fullmatch(token.content.strip()):
            if open_at is not None:
                raise SumpipeError(f"{where}:{line + 1}: a generated block starts inside {open_at[0]!r} "
                                   f"(line {open_at[1] + 1}), which has no end marker")
            open_at = (match.group(1), line)
        elif END.fullmatch(token.content.strip()):
            if open_at is None:
                raise SumpipeError(f"{where}:{line + 1}: an end marker without a start marker")
            blocks.append(Block(open_at[0], open_at[1], line))
            open_at = None
    if open_at is not None:
        raise SumpipeError(f"{where}:{open_at[1] + 1}: generated block {open_at[0]!r} has no end marker")
    return blocks


def rewrite(text: str, render: Render, known: Iterable[str], where: str = "") -> tuple[str, list[str]]:
    """`text` with every block replaced by `render(name)`, and the names of the blocks that changed."""
    blocks = find_blocks(text, where)
    names = set(known)
    for block in blocks:
        if block.name not in names:
            raise SumpipeError(f"{where}:{block.start + 1}: unknown generated block {block.name!r} "
                               f"(known: {', '.join(sorted(names))})")
    lines = text.splitlines(keepends=True)
    changed = []
    for block in reversed(blocks):  # from the end, so earlier line numbers stay valid
        body = ["\n", *(line + "\n" for line in render(block.name).strip("\n").split("\n")), "\n"]
        if lines[block.start + 1 : block.end] != body:
            lines[block.start + 1 : block.end] = body
            changed.append(block.name)
    return "".join(lines), changed[::-1]


def update_files(paths: Iterable[Path], render: Render, known: Iterable[str],
                 write: bool) -> dict[Path, list[str]]:
    """The blocks that differ from their renderer's text, per file; with `write`, rewritten in place."""
    from sumpipe.io.atomic import write_text

    known = list(known)
    stale: dict[Path, list[str]] = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        new, changed = rewrite(text, render, known, str(path))
        if changed:
            stale[path] = changed
            if write:
                write_text(new, path)
    return stale
