"""Step 1 of Alg. 2: remove extra symbols — markup and markers that are not part of the text.

Runs on the raw, cased text, before sentence splitting:

- HTML: entities are unescaped ("&amp;" -> "&"), "<br />" becomes a line break (it separates
  paragraphs in scraped reviews), every other tag is removed;
- Penn Treebank escapes of already-tokenized corpora (Gigaword, CNN/DM's tokenized release):
  "-lrb-" "-rrb-" "-lsb-" "-rsb-" "-lcb-" "-rcb-" and the quote pairs "``" "''" are removed,
  exactly like the brackets and quotes they stand for (the tokenizer drops those); "\\/" and "\\*"
  become "/" and "*";
- the unknown-word markers "<unk>" and "UNK" both become the plain word "unk": never the vocabulary's
  own special token "<unk>", and never split into "< unk >";
- CNN's byline marker "(CNN) --" (and its variants "(CNN Student News) --", "(CNNMoney) --")
  disappears entirely: it opens most CNN stories, so it carries no information. Other credits
  keep their name, as in the thesis' golden example "LONDON, England (Reuters) -- Harry ..." ->
  "london , england reuters harry ...": the brackets and dashes go, the word stays;
- line breaks are normalised to "\\n" (they separate paragraphs) and runs of spaces or tabs to one
  space.
"""

from __future__ import annotations

import html
import re

_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_LINE_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)
_UNKNOWN_WORD = re.compile(r"<unk>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")
_PTB_ESCAPE = re.compile(r"-(?:lrb|rrb|lsb|rsb|lcb|rcb)-|``|''", re.IGNORECASE)
_CNN_BYLINE = re.compile(r"\(CNN[^()\n]{0,30}\)(?:\s*--)?", re.IGNORECASE)
_LINE_END = re.compile(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]")


def remove_extra_symbols(text: str) -> str:
    """Remove HTML, PTB escapes and CNN bylines; normalise line breaks and blanks (cased text in and out)."""
    if "&" in text:
        text = _ENTITY.sub(lambda m: html.unescape(m.group()), text)
    if "<" in text:
        text = _LINE_BREAK_TAG.sub("\n", text)
        text = _UNKNOWN_WORD.sub(" unk ", text)  # "UNK" needs nothing: lowercasing makes it "unk"
        text = _TAG.sub(" ", text)
    text = _PTB_ESCAPE.sub(" ", text)
    if "\\" in text:
        text = text.replace("\\/", "/").replace("\\*", "*")  # PTB escapes "/" and "*" too
    text = _CNN_BYLINE.sub(" ", text)
    text = _LINE_END.sub("\n", text).replace("\t", " ")
    # str.replace is much faster than a regular expression, which would stop at every single space.
    while "  " in text:
        text = text.replace("  ", " ")
    return text
