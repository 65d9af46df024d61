"""Seed 001 Alg. 2 end to end on single documents: the thesis' golden examples and the fixed quirks."""

from __future__ import annotations

import pytest

from sumpipe.text.preprocess import preprocess_document, preprocess_sentences, preprocess_text, truncate_tokens

# SEEDS.md §1.1: raw CNN text -> the preprocessed text printed in the thesis.
GOLDEN = [
    ("LONDON, England (Reuters) -- Harry Potter star Daniel Radcliffe gains access to a reported £20 "
     "million ($41.1 million) fortune as he turns 18 on Monday, but he insists the money won't cast a "
     "spell on him.",
     "london , england reuters harry potter star daniel radcliffe gains access to a reported # 20 million "
     "$ 41.1 million fortune as he turns 18 on monday , but he insists the money will not cast a spell on "
     "him ."),
    ("Editor's note: In our Behind the Scenes series, CNN correspondents share their experiences ...",
     "editor 's note : in our behind the scenes series , cnn correspondents share their experiences ..."),
    ('WASHINGTON (CNN) -- Doctors removed five small polyps from President Bush\'s colon on Saturday, and '
     '"none appeared worrisome," a White House spokesman said.',
     "washington doctors removed five small polyps from president bush 's colon on saturday , and none "
     "appeared worrisome , a white house spokesman said ."),
    ("MINNEAPOLIS, Minnesota (CNN) -- Drivers who were on the Minneapolis bridge when it collapsed told "
     "harrowing tales of survival.",
     "minneapolis , minnesota drivers who were on the minneapolis bridge when it collapsed told harrowing "
     "tales of survival ."),
    # Table A.2 (input text): "it's" expands to "it is"; "analyst/personality" stays one token.
    ("It's been such a great ride", "it is been such a great ride"),
    ("He won 16 Emmy awards for outstanding sports analyst/personality, NBC said.",
     "he won 16 emmy awards for outstanding sports analyst/personality , nbc said ."),
]


@pytest.mark.parametrize(("raw", "expected"), GOLDEN)
def test_golden_examples_come_out_exactly(raw: str, expected: str) -> None:
    assert preprocess_text(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), GOLDEN)
def test_golden_outputs_are_fixed_points(raw: str, expected: str) -> None:
    assert preprocess_text(expected) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("Shares rose 82% on Monday", "shares rose 82 % on monday"),        # the book's regex lost "%"
    ("It cost 12.40 dollars", "it cost 12.40 dollars"),                 # ... and split "12 . 40"
    ("a reported $41.1 million", "a reported $ 41.1 million"),          # currency sign split off
    ("a £20 fine", "a # 20 fine"),
    ("the poster-print sold", "the poster-print sold"),
    ("an analyst/personality", "an analyst/personality"),
    ("the U.S.A. and the u.s.a. and u.s.a", "the u.s.a. and the u.s.a. and u.s.a"),
    ("1,000 people at 10:30 in anti-U.S. protests", "1,000 people at 10:30 in anti-u.s. protests"),
    ("Wow! Really? Yes; no: maybe & so", "wow !\nreally ?\nyes ; no : maybe & so"),
])
def test_tokenizer_quirks_are_fixed(raw: str, expected: str) -> None:
    assert preprocess_text(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("Amy's dog", "amy 's dog"),
    ("the Jones' house", "the jones house"),           # a lone trailing apostrophe is a quote: dropped
    ("Amy\u2019s dog and it\u2019s late", "amy 's dog and it is late"),   # typographic apostrophe
    ("the 1990's", "the 1990 's"),
])
def test_possessive_is_split_off(raw: str, expected: str) -> None:
    assert preprocess_text(raw) == expected


def test_contractions_expand_without_breaking_usa() -> None:
    assert preprocess_text("U.S.A. fans don't think u.s.a won't win; I'll see.") == \
        "u.s.a. fans do not think u.s.a will not win ; i will see ."


def test_non_ascii_is_folded_or_dropped() -> None:
    assert preprocess_text("Café naïve 日本 Beyoncé\u200b — “quoted”") == "cafe naive beyonce quoted"


def test_mojibake_is_repaired_and_reported() -> None:
    text, repaired = preprocess_document("Jon RodrÃ\xadguez said â€” Â£220,000")
    assert (text, repaired) == ("jon rodriguez said # 220,000", True)
    assert preprocess_document("Plain text.") == ("plain text .", False)


@pytest.mark.parametrize("raw", ["", "   ", "\n\n \t", "-- () ``''", "\ufffd\ufffd"])
def test_empty_input_gives_empty_output(raw: str) -> None:
    assert preprocess_text(raw) == ""


def test_sentences_are_split_with_punkt_and_joined_by_newlines() -> None:
    raw = "Mr. Smith met U.S. officials on Monday. They talked for hours. Dr. Jones was there too."
    assert preprocess_text(raw) == ("mr. smith met u.s. officials on monday .\n"
                                    "they talked for hours .\n"
                                    "dr. jones was there too .")


def test_every_line_break_ends_a_sentence_by_default() -> None:
    highlights = "Harry Potter star gets his fortune\nYoung actor says he has no plans"
    assert preprocess_text(highlights) == "harry potter star gets his fortune\nyoung actor says he has no plans"
    assert preprocess_text(highlights, line_breaks="ignore") == \
        "harry potter star gets his fortune young actor says he has no plans"


@pytest.mark.parametrize(("gigaword", "expected"), [
    # Already preprocessed text stays as it is ...
    ("us auto sales will likely be weaker in #### , a senior executive at ford motor company said wednesday .",
     "us auto sales will likely be weaker in #### , a senior executive at ford motor company said wednesday ."),
    ("the ##-year-old won #.# percent of the vote in the u.s. state",
     "the ##-year-old won #.# percent of the vote in the u.s. state"),
    # ... except escapes, quotes and dashes, which go; unknown-word markers become one word "unk";
    # PTB contractions expand.
    ("police said `` we do n't know '' -lrb- UNK -rrb- -- <unk> ca n't say",
     "police said we do not know unk unk can not say"),
])
def test_gigaword_style_input_changes_nothing_harmful(gigaword: str, expected: str) -> None:
    assert preprocess_text(gigaword) == expected
    assert preprocess_text(expected) == expected


def test_truncate_tokens_keeps_sentence_breaks() -> None:
    assert truncate_tokens("a b c\nd e\nf", 4) == "a b c\nd"
    assert truncate_tokens("a b c\nd e\nf", 3) == "a b c"
    assert truncate_tokens("a b", 5) == "a b"


@pytest.mark.parametrize(("raw", "expected"), GOLDEN)
def test_sentence_by_sentence_gives_the_same_text(raw: str, expected: str) -> None:
    assert "\n".join(line for _, line in preprocess_sentences(raw)) == expected


def test_sentences_keep_their_written_form_beside_the_preprocessed_one() -> None:
    raw = ('WASHINGTON (CNN) -- Doctors removed five polyps. "None appeared worrisome," a spokesman said.\n'
           "\u4e2d\u6587\n"  # a line with no Latin text leaves no token: no pair
           "It's over.")
    assert preprocess_sentences(raw) == [
        ("WASHINGTON Doctors removed five polyps.", "washington doctors removed five polyps ."),
        ('"None appeared worrisome," a spokesman said.', "none appeared worrisome , a spokesman said ."),
        ("It's over.", "it is over ."),
    ]
