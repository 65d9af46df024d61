"""Text from bytes: the encoding (a byte order mark picks UTF-16 or UTF-32, else UTF-8), decoding with
invalid bytes replaced and counted, and lines split as Python's text mode splits them.
"""

from __future__ import annotations

import codecs


def text_encoding(head: bytes) -> str:
    """The encoding of text that starts with `head`: UTF-16 or UTF-32 when it opens with their byte
    order mark (Windows editors write UTF-16 this way), else UTF-8 (a UTF-8 BOM is dropped)."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return "utf-8-sig"


def decode_text(data: bytes, encoding: str | None = None) -> tuple[str, bool]:
    """`data` as text in `encoding` (default: `text_encoding`'s) and whether invalid bytes had to be
    replaced (by U+FFFD): the caller decides whether a repaired text is refused or counted."""
    encoding = encoding or text_encoding(data[:4])
    try:
        return data.decode(encoding), False
    except UnicodeDecodeError:
        return data.decode(encoding, errors="replace"), True


def text_lines(data: bytes) -> list[tuple[str, bool]]:
    """The lines of text `data`, each with whether invalid bytes in it were replaced.

    A line ends at LF, CR LF or CR only, as in Python's text mode (a JSON string may hold a raw
    U+2028). UTF-8 is decoded line by line, so a repair is counted on the line that needed it.
    """
    encoding = text_encoding(data[:4])
    if encoding == "utf-8-sig":
        return [decode_text(raw, "utf-8") for raw in data.removeprefix(codecs.BOM_UTF8).splitlines()]
    text, repaired = decode_text(data, encoding)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":  # the last line's end
        lines.pop()
    return [(line, repaired and "\ufffd" in line) for line in lines]
