"""sumy's side of bench_extractive.py: run in sumy's own virtual environment, never imported by sumpipe.

    /work/venv-sumy/bin/python bench/sumy_runner.py --sentences 3 < documents.json > selections.json

stdin: {"documents": [[sentence text, ...], ...], "bonus": [...], "stigma": [...], "methods": [...]}
(sentences already split and tokenized by sumpipe, tokens joined by spaces). stdout: {method:
{"seconds": wall seconds for all documents, "selected": [[sentence index, ...], ...]}}. Each
document is one paragraph of sumy `Sentence`s over those very sentences, words = the tokens with a
letter (sumy's own tokenizer keeps words only), sumy's English stop words and Snowball stemmer.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

from sumy.models.dom import ObjectDocumentModel, Paragraph, Sentence
from sumy.nlp.stemmers import Stemmer
from sumy.summarizers.edmundson import EdmundsonSummarizer
from sumy.summarizers.kl import KLSummarizer
from sumy.summarizers.lex_rank import LexRankSummarizer
from sumy.summarizers.lsa import LsaSummarizer
from sumy.summarizers.luhn import LuhnSummarizer
from sumy.summarizers.random import RandomSummarizer
from sumy.summarizers.reduction import ReductionSummarizer
from sumy.summarizers.sum_basic import SumBasicSummarizer
from sumy.summarizers.text_rank import TextRankSummarizer
from sumy.utils import get_stop_words

WORD = re.compile(r"^[^\W\d_](?:[^\W\d_]|['-])*$")


class PreTokenized:
    """sumy's tokenizer interface over text that is already tokenized."""

    language = "english"

    def to_words(self, text: str) -> tuple[str, ...]:
        return tuple(w for w in text.split() if WORD.match(w))

    def to_sentences(self, text: str) -> tuple[str, ...]:
        return tuple(line for line in text.split("\n") if line)


SUMMARIZERS = {
    "luhn": LuhnSummarizer, "edmundson": EdmundsonSummarizer, "lsa": LsaSummarizer,
    "lexrank": LexRankSummarizer, "textrank": TextRankSummarizer, "sumbasic": SumBasicSummarizer,
    "klsum": KLSummarizer, "reduction": ReductionSummarizer, "random": RandomSummarizer,
}


def build(name: str, stop_words: frozenset[str], bonus: list[str], stigma: list[str]):  # type: ignore[no-untyped-def]
    summarizer = SUMMARIZERS[name](Stemmer("english"))
    if name == "edmundson":
        summarizer.bonus_words, summarizer.stigma_words, summarizer.null_words = bonus, stigma, stop_words
    else:
        summarizer.stop_words = stop_words
    return summarizer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=3)
    args = parser.parse_args()
    job = json.load(sys.stdin)
    tokenizer = PreTokenized()
    stop_words = frozenset(get_stop_words("english"))
    out = {}
    for name in job["methods"]:
        started = time.perf_counter()
        summarizer = build(name, stop_words, job["bonus"], job["stigma"])
        selected = []
        for sentences in job["documents"]:
            sumy_sentences = [Sentence(s, tokenizer) for s in sentences]
            document = ObjectDocumentModel([Paragraph(sumy_sentences)])
            position = {id(s): i for i, s in enumerate(sumy_sentences)}
            chosen = summarizer(document, args.sentences)
            # sumy returns Sentence objects; equal texts compare equal, so map back by identity first
            index = [position.get(id(s)) for s in chosen]
            if None in index:
                index = sorted({sentences.index(str(s)) for s in chosen})
            selected.append(sorted(index))
        out[name] = {"seconds": time.perf_counter() - started, "selected": selected}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
