"""The report's markdown as a standalone HTML page, rendered by markdown-it-py.

CommonMark plus GFM pipe tables (`---:` columns come out right-aligned), raw HTML in the markdown
escaped rather than passed through (sample summaries are model output), and every image wrapped in a
link to its file, so a figure shrunk to the page width opens at full size. markdown-it parses in
linear time: no input, however malformed ("#tag", a broken "![" line), can stall it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

STYLE = """
body { font-family: sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #f3f3f3; }
td[style*="right"] { white-space: nowrap; }
img { max-width: 100%; border: 1px solid #eee; }
code { background: #f6f6f6; padding: 0 0.2em; }
"""


def _linked_image(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """markdown-it's own <img>, inside a link to the image file."""
    image = renderer.image(tokens, idx, options, env)
    src = tokens[idx].attrGet("src")  # typed str | int | float | None; markdown-it sets an image's src as str
    return f'<a href="{html.escape(str(src or ""))}">{image}</a>'


def markdown_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.add_render_rule("image", _linked_image)
    return md


def markdown_to_html(markdown: str, title: str) -> str:
    """A complete HTML page (inline CSS) for `markdown`, titled `title`."""
    body = markdown_parser().render(markdown)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n"
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n")
