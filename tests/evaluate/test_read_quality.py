"""Read-quality measures, by hand."""

import gzip
import json
from pathlib import Path

import pytest

from sumpipe.evaluate.read_quality import (
    KEYS,
    LOWER_IS_BETTER,
    ORIENTED,
    Casing,
    NameDots,
    adjacent_pairs,
    casing,
    figures,
    fragment,
    is_number,
    jammed_pairs,
    name_dots,
    pieces,
    read_quality,
    repeated_trigrams,
    repeats_a_word,
    split_sentences,
    stems,
    stop_words,
    summary_counts,
    unsupported_stems,
)


def test_a_padded_summary_has_two_sentences_one_a_fragment():
    summary = "convert degrees to a temperature celsius temperature . degrees ."
    assert split_sentences(summary) == [
        ["convert", "degrees", "to", "a", "temperature", "celsius", "temperature", "."], ["degrees", "."]]
    assert fragment(summary)
    assert not fragment(summary, max_words=0)


def test_sentences_end_at_final_tokens_and_line_breaks():
    assert split_sentences("what is it ? a test ! yes") == [["what", "is", "it", "?"], ["a", "test", "!"], ["yes"]]
    assert split_sentences("return the index\nof the frame .") == [["return", "the", "index"],
                                                                   ["of", "the", "frame", "."]]
    assert split_sentences("") == [] and split_sentences(" \n ") == []


def test_wordless_runs_join_a_sentence():
    # ". ." after a sentence is no sentence of its own; leading punctuation joins the first sentence
    assert split_sentences("return the index . .") == [["return", "the", "index", ".", "."]]
    assert split_sentences(". -- return the index .") == [[".", "--", "return", "the", "index", "."]]
    assert not fragment("return the index . .")
    assert fragment("the index . of it .\n(")  # "of it ." has 2 words; "(" joins it


def test_repetition_figures():
    assert repeats_a_word("the the index .") and not repeats_a_word("the index . .")
    # 3-grams within lines: abc bca cab abc -> one repeat of 4; the second line has one 3-gram
    assert repeated_trigrams("a b c a b c\nd e f") == (1, 5)
    assert repeated_trigrams("") == (0, 0)


def test_numbers_and_stop_words():
    assert is_number("2017") and is_number("3.5") and is_number("1,000")
    assert not is_number("utf-8") and not is_number("py3")
    assert {"the", "of", "to", "'s"} <= stop_words() and "celsius" not in stop_words()


SUMMARIES = ["convert degrees to celsius . degrees .",
             "return the dataframe of 2017 .\nreturn the dataframe of 2017 .",
             "the the pandas file ."]
SOURCES = ["convert degrees fahrenheit to celsius .",
           "return a dataframe from 2016 using pandas .",
           "read the file ."]
REFERENCES = ["convert degrees to celsius .", "return a dataframe .", "read the file ."]
RAW = ["Convert degrees Fahrenheit to Celsius.", "Return a DataFrame from 2016 using Pandas.", "Read the file."]


def test_read_quality_by_hand():
    out = read_quality(SUMMARIES, SOURCES, REFERENCES, raw_sources=RAW)
    assert list(out) == list(KEYS)
    assert out["fragment_rate"] == 33.33                  # "degrees ." in the first summary
    assert out["sentences_mean"] == 1.67                  # (2 + 2 + 1) / 3
    assert out["more_sentences_than_reference"] == 66.67  # the first two have 2 sentences, their references 1
    assert out["adjacent_repeat"] == 33.33                # "the the"
    assert out["repeated_trigrams"] == 25.0               # 5 + 8 + 3 3-grams; the second line repeats 4
    # content pieces: convert degrees celsius degrees | return dataframe 2017 x2 | pandas file = 12;
    # unsupported, clipped by the source's counts: the second "degrees" (its source has one), the second
    # "return" and "dataframe", both "2017" (the source has 2016), pandas (not in its own source) = 6
    assert out["unsupported_stems"] == 50.0
    assert out["unsupported_numbers"] == 100.0
    # repeated beyond max(1, the source's count): degrees 2 - 1, return 2 - 1, dataframe 2 - 1, 2017 2 - 1 = 4
    assert out["repeated_words"] == 33.33
    # names: celsius (Celsius), dataframe x2 (DataFrame), pandas (Pandas in another source; "Convert" and
    # "Return" open their sentence and say nothing) = 4; the second dataframe (clipped) and pandas unsupported
    assert out["unsupported_names"] == 50.0
    # adjacent content-word pairs: (convert, degrees), which its source writes, and (pandas, file), which
    # "read the file ." does not: 1 of 2 (the second summary's words all have a stop word between them)
    assert out["jammed_pairs"] == 50.0


def test_without_raw_sources_no_word_is_a_name():
    out = read_quality(SUMMARIES, SOURCES, REFERENCES)
    assert out["unsupported_names"] == 0.0 and out["unsupported_stems"] == 50.0


def test_repetition_at_a_distance_is_what_the_source_does_not_repeat():
    def repeated(summary: str, source: str) -> float:
        return figures(summary_counts(summary, source, summary), 1)["repeated_words"]

    # content words convert, degrees, degrees: one "degrees" beyond the source's one
    assert repeated("convert degrees to degrees .", "convert degrees to a temperature .") == pytest.approx(100 / 3)
    assert repeated("open the path of the path .", "open the path .") == pytest.approx(100 / 3)
    # the source repeats "path": the summary may too, and no more; a word the source lacks still counts once
    assert repeated("the path and the path .", "a path .\nthe path .") == 0.0
    assert repeated("path , path , path .", "a path .\nthe path .") == pytest.approx(100 / 3)
    assert repeated("mars mars .", "the moon .") == 50.0
    # stop words and punctuation are no content words: nothing repeated, nothing counted
    assert repeated("the the . .", "x .") == 0.0
    assert repeated("", "x .") == 0.0


def test_unsupported_words_are_clipped_by_the_source_s_counts():
    counts = summary_counts("in 2017 and 2017 growth .", "sales in 2017 .", "x .")
    # content words 2017, 2017, growth: the second 2017 is beyond the source's one, "growth" is not in it
    assert (counts["stems"], counts["stems_unsupported"]) == (3, 2)
    assert (counts["number"], counts["number_unsupported"]) == (2, 1)
    assert figures(counts, 1)["unsupported_numbers"] == 50.0
    # without clipping a repeated supported word would be supported every time
    assert figures(summary_counts("rates rates rates .", "rates rose .", "x ."), 1)["unsupported_stems"] == \
        pytest.approx(200 / 3)


def test_words_are_compared_as_rouge_compares_them_pieces_and_porter_stems():
    # every run outside [a-z0-9] separates; pieces longer than 3 characters take their Porter stem
    assert pieces("A 44-year-old 's") == ["a", "44", "year", "old", "s"]
    assert stems("degrees scored scores was") == ["degre", "score", "score", "was"]
    # "scored" is supported by "scores"; "he" is a stop word; "2" and "goals" are not in the source
    assert unsupported_stems("he scored 2 goals .", "he scores twice .") == (2, 3)
    # the tokens differ ("two-year" against "two year"; "'s" against a source that lost its apostrophe),
    # the content does not: nothing unsupported ("two", "a" and the "s" of "'s" are stop words)
    assert unsupported_stems("a two-year deal .", "signed a two year deal .") == (0, 2)
    assert unsupported_stems("the show 's latest addition .", "the show s latest addition .") == (0, 2)
    assert unsupported_stems("", "x .") == (0, 0) and unsupported_stems("a b", "") == (1, 1)


def test_one_summary_s_figures_pool_into_the_system_s():
    names = casing("\n".join(RAW))
    total = sum((summary_counts(s, src, ref, NameDots(), casing(raw), names)
                 for s, src, ref, raw in zip(SUMMARIES, SOURCES, REFERENCES, RAW)), start=summary_counts("", "", ""))
    pooled = {key: round(value, 2) for key, value in figures(total, len(SUMMARIES)).items()}
    assert pooled == read_quality(SUMMARIES, SOURCES, REFERENCES, raw_sources=RAW)
    one = figures(summary_counts(SUMMARIES[0], SOURCES[0], REFERENCES[0], NameDots(), casing(RAW[0]), names), 1)
    assert (one["fragment_rate"], one["sentences_mean"], one["unsupported_stems"]) == (100.0, 2.0, 25.0)
    assert summary_counts("a .", "a .", "a .", own=Casing(frozenset(), frozenset()))["name"] == 0
    assert set(ORIENTED) == set(KEYS) - {"sentences_mean"} and LOWER_IS_BETTER == set(ORIENTED)


def test_a_word_s_own_input_spelling_comes_first():
    # "pandas" is mostly "Pandas" across the split, but the first text spells it lowercase: not a name there;
    # "numpy" is not in the second text, so its spelling comes from the split ("NumPy"): a name, unsupported
    raw = ["Use pandas with NumPy here.", "Install Pandas first. Then use Pandas."]
    sources = ["use pandas with numpy here .", "install pandas first .\nthen use pandas ."]
    out = read_quality(["pandas frame .", "numpy ."], sources, sources, raw_sources=raw)
    assert out["unsupported_names"] == 100.0       # 1 name (numpy), unsupported; 50.0 if pandas counted
    assert out["unsupported_stems"] == 66.67       # frame and numpy of pandas, frame, numpy


def test_the_references_anchor_and_empty_input():
    out = read_quality(REFERENCES, SOURCES, REFERENCES)
    assert out["more_sentences_than_reference"] == 0.0 and out["fragment_rate"] == 0.0
    empty = read_quality([], [], [])
    assert empty["sentences_mean"] == 0.0 and empty["unsupported_stems"] == 0.0
    with pytest.raises(ValueError, match="differ in number"):
        read_quality(["a ."], [], ["a ."])


def test_the_dot_of_a_name_the_tokenizer_split_ends_no_sentence() -> None:
    raw = "Override numpy.ndarray's __getitem__ to read a .npy file; see self._refs. Then stop."
    pairs = name_dots(raw)
    assert {("numpy", "ndarray"), ("", "npy"), ("self", "_refs")} <= pairs
    assert not any(after == "then" for _, after in pairs)      # a sentence end: a space follows the dot
    # The decoder breaks the line after every "."; the names' dots still join their words.
    summary = "override numpy .\nndarray 's method to read a .\nnpy file .\nthen stop reading ."
    dots = NameDots(pairs)
    assert split_sentences(summary, dots) == [
        ["override", "numpy", ".", "ndarray", "'s", "method", "to", "read", "a", ".", "npy", "file", "."],
        ["then", "stop", "reading", "."]]
    assert not fragment(summary, dots=dots)
    assert fragment(summary)                              # without the raw text: "override numpy ." is 2 words
    # A padded sentence stays a fragment: no raw text joins "temperature" and "degrees" with a dot, even
    # where "degrees" follows some other dot ("x.degrees").
    padded = "convert degrees to a temperature .\ndegrees ."
    assert fragment(padded, dots=NameDots(name_dots("Convert degrees. To C."), name_dots("x.degrees is the angle")))
    # A name the train split knows ("torch.nn.Module") is no fragment in a summary whose source lacks it.
    learnt = "return a torch .\nnn .\nmodule ."
    assert fragment(learnt, dots=NameDots(name_dots("Return a tensor.")))
    assert not fragment(learnt, dots=NameDots(name_dots("Return a tensor."), name_dots("see torch.nn.Module")))


def test_an_ellipsis_or_a_dot_before_a_capital_is_no_names_dot() -> None:
    # CNN stories: "energetic...He", "a medical leave .The city" end sentences; a file's extension (".npy")
    # and a name's dot ("u.s") still join
    pairs = name_dots("very energetic...He left. Just a leave .The city. A .npy file; the U.S. team; ...yes...the "
                      'end; "Flame". . .the Elvis')
    assert pairs == {("", "npy"), ("u", "s")}
    assert name_dots("Call `obj`.__init__ or f().append") == {("", "__init__"), ("", "append")}   # code names join
    # a summary that starts its sentences with "he" and "the": three sentences, not one
    summary = "new : he left .\nhe says .\nthe city is calm ."
    assert len(split_sentences(summary, NameDots(frozenset(), pairs))) == 3


def test_read_quality_splits_with_the_raw_texts_dots() -> None:
    summaries = ["calls bytes .\ndecode element-wise ."]
    sources, raws = ["calls bytes . decode on each element ."], ["Calls bytes.decode on each element."]
    assert read_quality(summaries, sources, summaries)["fragment_rate"] == 100.0
    figures = read_quality(summaries, sources, summaries, raw_sources=raws)
    assert figures["fragment_rate"] == 0.0 and figures["sentences_mean"] == 1.0
    # The reference's own raw text counts too (measuring the references as a system).
    assert read_quality(summaries, sources, summaries, raw_sources=["Calls it."],
                        raw_references=["Calls bytes.decode element-wise."])["fragment_rate"] == 0.0


def test_read_quality_counts_the_train_splits_names_dots() -> None:
    summaries = ["return a torch .\nnn .\nmodule ."]
    sources, raws = ["return a tensor ."], ["Return a tensor."]
    assert read_quality(summaries, sources, summaries, raw_sources=raws)["fragment_rate"] == 100.0
    corpus = name_dots("Subclass torch.nn.Module.")
    figures = read_quality(summaries, sources, summaries, raw_sources=raws, corpus_dots=corpus)
    assert figures["fragment_rate"] == 0.0 and figures["sentences_mean"] == 1.0


def test_adjacent_pairs_stay_within_lines() -> None:
    assert adjacent_pairs("a b c\nd e") == [("a", "b"), ("b", "c"), ("d", "e")]
    assert adjacent_pairs("") == [] and adjacent_pairs("a\nb") == []


def test_jammed_pairs_are_content_words_side_by_side_that_the_source_never_writes_so() -> None:
    source = set(adjacent_pairs("the port of ushuia .\nships that visited port stanley ."))
    # (port, ushuia): the source puts "of" between them; (ushuia, ships): never side by side; (ships,
    # stanley) neither; (port, stanley) is the source's own pair
    assert jammed_pairs("port ushuia ships stanley .", source) == (3, 3)
    assert jammed_pairs("port stanley .", source) == (0, 1)
    # a stop word or punctuation between two content words: no pair at all
    assert jammed_pairs("the port of ushuia , ships .", source) == (0, 0)
    assert jammed_pairs("", source) == (0, 0)


# The quoted run-on summary (experiments/cnn, M2), with a source written after its story: every name is the
# story's, but the story never writes them in that row.
QUOTED = ("new : the middle week of the british ship is the two other passengers in the adonia 2,600 passenger "
          "princess permission dock argentinean port ushuia ships stanley vessels visited .")
QUOTED_SOURCE = ("the adonia , a p&o cruise ship with 2,600 passengers , was refused permission to dock in the "
                 "argentinean port of ushuia .\nships that had visited port stanley in the falkland islands were "
                 "turned away .")


def test_the_quoted_run_on_summary_is_flagged() -> None:
    # 14 pairs: middle week, british ship, then the 12 of "adonia ... visited"; only (argentinean, port) is
    # the source's ("two" and "other" are stop words, ":" no word)
    assert jammed_pairs(QUOTED, set(adjacent_pairs(QUOTED_SOURCE))) == (13, 14)
    quoted = read_quality([QUOTED], [QUOTED_SOURCE], ["the adonia was refused permission to dock ."])
    assert quoted["jammed_pairs"] == 92.86
    # the story's own sentence, as a summary, jams nothing
    extract = QUOTED_SOURCE.split("\n")[0]
    assert read_quality([extract], [QUOTED_SOURCE], [extract])["jammed_pairs"] == 0.0


def test_the_references_own_jammed_pairs() -> None:
    # a reference rephrases: (prime, minister) is the source's, (minister, cameron) and (cameron, spoke) are not
    sources = ["cameron , the prime minister , spoke .", "convert degrees fahrenheit to celsius ."]
    references = ["prime minister cameron spoke .", "convert degrees to celsius ."]
    assert read_quality(references, sources, references)["jammed_pairs"] == 50.0   # 2 of 4 pairs
    assert read_quality(references[:1], sources[:1], references[:1])["jammed_pairs"] == 66.67


def test_the_quoted_summary_against_its_own_story(shared_data: Path) -> None:
    from sumpipe.text.preprocess import preprocess_text

    with gzip.open(shared_data / "cnndm" / "cnn_stories.jsonl.gz", "rt") as lines:
        story = next(r for r in map(json.loads, lines) if r["id"] == "cnn-8")
    source, reference = preprocess_text(story["source"]), preprocess_text(story["reference"])
    # the story writes "2,600 passenger" and "argentinean port"; the other 12 of the 14 pairs it never does
    assert jammed_pairs(QUOTED, set(adjacent_pairs(source))) == (12, 14)
    # its highlights, telegraphic ("the 750-passenger adonia on 87-day journey"), jam 66.67 %
    assert read_quality([reference], [source], [reference])["jammed_pairs"] == 66.67
