"""Content words: the stop-word list and what counts as a word (`sumpipe.vocab.words`)."""

from __future__ import annotations

from sumpipe.vocab.words import NLTK_ENGLISH_STOP_WORDS, content_words, is_content_word


def test_stop_words_and_punctuation():
    assert len(NLTK_ENGLISH_STOP_WORDS) == 179
    assert content_words("wales , british and irish lions fly-half 's 20 -- #".split()) == [
        "wales", "british", "irish", "lions", "fly-half", "20"]
    # Table 4.7's stop-word-free text keeps these (scikit-learn's list would remove them).
    assert all(is_content_word(w) for w in ["become", "ever", "least", "even"])
