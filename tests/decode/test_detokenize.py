"""The Treebank detokenizer: NLTK's rules, the same output as NLTK's own class."""

from __future__ import annotations

import pytest
from nltk.tokenize.treebank import TreebankWordDetokenizer

from sumpipe.decode.detokenize import detokenize

# Every rule's trigger at least once: contractions, clitics, quotes, dashes, brackets, punctuation,
# currency and percent, ellipses, numbers with commas, and the pipeline's own lowercased tokens.
CASES = [
    "the value ( x ) is amy 's .",
    "london , england reuters harry potter star daniel radcliffe gains access to a reported # 20 million $ "
    "41.1 million fortune as he turns 18 on monday , but he insists the money will not cast a spell on him .",
    "i can not go , gon na stay ; wan na see ? yes !",
    "he said `` hello '' and she said ' bye ' .",
    "they 'll do it -- they 're sure , they 've said so .",
    "i 'm here , you 'd know , it 's 5 % of $ 3.88 ...",
    "call f [ 1 ] , then { a : b } and < c > .",
    "'t is the season , 't was the night",
    "don n't do n't stop : 1,000 people .",
    "ends with a quote . ''",
    "'' .",
    "",
    "what ?! really !!",
    "a . b . c",
    "the u.s. army 's men and women .",
]


@pytest.mark.parametrize("text", CASES)
def test_detokenize_matches_nltk(text: str) -> None:
    tokens = text.split()
    assert detokenize(tokens) == TreebankWordDetokenizer().detokenize(tokens)


def test_detokenize_hand_checked() -> None:
    assert detokenize("the value ( x ) is amy 's .".split()) == "the value (x) is amy's."
    assert detokenize("i can not go -- ok ?".split()) == "i cannot go--ok?"
    assert detokenize("he said `` hi '' .".split()) == 'he said "hi".'
