"""Characters: repair broken encodings, then fold text to ASCII (Alg. 2, `RemoveUnicode`).

The thesis keeps ASCII only. Dropping every other character blindly loses too much of real news
text, so non-ASCII characters are first *mapped* where an ASCII spelling exists:

- "£" becomes "# " — the thesis' own golden example turns "£20 million" into "# 20 million";
- typographic quotes, apostrophes, dashes and the ellipsis become their ASCII forms, so "won’t"
  still expands to "will not" and "—" still separates words;
- accented letters lose their accents ("café" -> "cafe") instead of the whole letter;
- everything left (symbols, other scripts) is dropped.

Before that, `repair_encoding` undoes the commonest corruption in scraped news, UTF-8 that was
decoded as Windows-1252 ("â€™" for "’", "Ã©" for "é"), and removes U+FFFD replacement
characters (bytes that were not UTF-8 at all; nothing is left to recover there).
"""

from __future__ import annotations

import re
import unicodedata

# Windows-1252 character -> the byte it encodes (bytes cp1252 leaves undefined map to themselves,
# as latin-1 decoders produce them).
_CP1252_TO_BYTE = str.maketrans(
    {(bytes([b]).decode("cp1252", errors="ignore") or chr(b)): chr(b) for b in range(0x80, 0x100)}
)
_CONTINUATION = "".join(
    re.escape(bytes([b]).decode("cp1252", errors="ignore") or chr(b)) for b in range(0x80, 0xC0)
)
# A UTF-8 lead byte (0xC2-0xF4, as Windows-1252 text) followed by continuation bytes.
_MOJIBAKE = re.compile(f"(?:[\u00c2-\u00f4][{_CONTINUATION}]+)+")

REPLACEMENT_CHARACTER = "\ufffd"

_TO_ASCII = str.maketrans({
    "£": "# ",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u02bc": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2212": "-",
    "\u2014": " -- ", "\u2015": " -- ",
    "\u2026": "...",
    "\u00bd": " 1/2", "\u00bc": " 1/4", "\u00be": " 3/4",
    "\u00d7": " x ",
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ",
    "\u2022": " ", "\u00b7": " ", "\u25cf": " ",
    # Invisible format characters: zero-width space, direction marks, soft hyphen, BOM.
    "\u200b": "", "\u200c": "", "\u200d": "", "\u200e": "", "\u200f": "", "\u202a": "", "\u202b": "",
    "\u202c": "", "\u202d": "", "\u202e": "", "\u00ad": "", "\ufeff": "", REPLACEMENT_CHARACTER: "",
})


def _redecode(match: re.Match[str]) -> str:
    run = match.group()
    try:
        return run.translate(_CP1252_TO_BYTE).encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return run  # not mojibake after all (e.g. a genuine "é»"): leave it


def repair_encoding(text: str) -> tuple[str, bool]:
    """Undo UTF-8-read-as-Windows-1252 mojibake and drop U+FFFD; return (text, whether repaired)."""
    if text.isascii():
        return text, False
    repaired = _MOJIBAKE.sub(_redecode, text)
    if REPLACEMENT_CHARACTER in repaired:
        repaired = repaired.replace(REPLACEMENT_CHARACTER, "")
    return repaired, repaired != text


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _fold(match: re.Match[str]) -> str:
    run = match.group().translate(_TO_ASCII)
    if run.isascii():
        return run
    # NFKD splits "é" into "e" + a combining accent; the ASCII encode then drops the accent.
    return unicodedata.normalize("NFKD", run).encode("ascii", "ignore").decode("ascii")


def to_ascii(text: str) -> str:
    """Map "£" to "#" and typographic punctuation to ASCII, strip accents, drop everything else."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(_fold, text)  # only the (few) non-ASCII runs are looked at
