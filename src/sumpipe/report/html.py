"""The report's markdown as a standalone HTML page (no markdown package needed).

Covers exactly what `report.stage` writes: headings, pipe tables (with `---:` right alignment),
images on their own line, "- " bullet lists, paragraphs, and inline **bold**, *italic* and `code`.
"""

from __future__ import annotations

import html
import re

_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)]+)\)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<!\*)\*(?!\*)(.+?)(?<!\*)\*(?!\*)")
_CODE = re.compile(r"`([^`]+)`")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")

STYLE = """
body { font-family: sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; white-space: nowrap; }
img { max-width: 100%; border: 1px solid #eee; }
code { background: #f6f6f6; padding: 0 0.2em; }
"""


def inline(text: str) -> str:
    """Escape HTML, then render `code`, **bold** and *italic*."""
    out = html.escape(text.replace("\\|", "|"), quote=False)
    out = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", out)
    out = _BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", out)
    return _ITALIC.sub(lambda m: f"<em>{m.group(1)}</em>", out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]


def _table(lines: list[str]) -> str:
    header, rule, *rows = lines
    right = [c.endswith(":") for c in _cells(rule)]
    out = ["<table>", "<tr>" + "".join(f"<th>{inline(c)}</th>" for c in _cells(header)) + "</tr>"]
    for row in rows:
        cells = _cells(row)
        tags = ['<td class="num">' if k < len(right) and right[k] else "<td>" for k in range(len(cells))]
        out.append("<tr>" + "".join(f"{tag}{inline(c)}</td>" for tag, c in zip(tags, cells)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def markdown_to_html(markdown: str, title: str) -> str:
    blocks: list[str] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = re.match(r"^(#{1,6}) (.*)$", line)
        image = _IMAGE.match(line.strip())
        if heading:
            level = len(heading.group(1))
            blocks.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            i += 1
        elif image:
            blocks.append(f'<p><img src="{html.escape(image["src"])}" alt="{html.escape(image["alt"])}"></p>')
            i += 1
        elif line.startswith("|"):
            table = []
            while i < len(lines) and lines[i].startswith("|"):
                table.append(lines[i])
                i += 1
            blocks.append(_table(table) if len(table) >= 2 else f"<p>{inline(table[0])}</p>")
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{inline(lines[i][2:])}</li>")
                i += 1
            blocks.append("<ul>\n" + "\n".join(items) + "\n</ul>")
        else:
            # The first line is always taken, so a line that merely looks like markup ("#tag", a
            # broken "![..](..)") becomes text instead of stalling the loop.
            para = [line]
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "|", "- ", "![")):
                para.append(lines[i])
                i += 1
            blocks.append(f"<p>{inline(' '.join(para))}</p>")
    body = "\n".join(blocks)
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{html.escape(title)}</title>\n"
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
