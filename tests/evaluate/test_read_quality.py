"""Read-quality measures, by hand; the fast Kneser-Ney score against nltk.lm's own."""

import math

import pytest

from sumpipe.evaluate.read_quality import (
    KEYS,
    FluencyModel,
    NameDots,
    fragment,
    is_number,
    name_dots,
    read_quality,
    repeated_trigrams,
    repeats_a_word,
    split_sentences,
    stop_words,
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
    # content words: convert degrees celsius degrees | return dataframe 2017 x2 | pandas file = 12;
    # unsupported: 2017, 2017 (the source has 2016), pandas (not in its own source) = 3
    assert out["unsupported_words"] == 25.0
    assert out["unsupported_numbers"] == 100.0
    # names: celsius (Celsius), dataframe x2 (DataFrame), pandas (Pandas in another source; "Convert" and
    # "Return" open their sentence and say nothing) = 4, of which pandas is unsupported
    assert out["unsupported_names"] == 25.0
    assert math.isnan(out["fluency"])


def test_without_raw_sources_no_word_is_a_name():
    out = read_quality(SUMMARIES, SOURCES, REFERENCES)
    assert out["unsupported_names"] == 0.0 and out["unsupported_words"] == 25.0


def test_a_word_s_own_input_spelling_comes_first():
    # "pandas" is mostly "Pandas" across the split, but the first text spells it lowercase: not a name there;
    # "numpy" is not in the second text, so its spelling comes from the split ("NumPy"): a name, unsupported
    raw = ["Use pandas with NumPy here.", "Install Pandas first. Then use Pandas."]
    sources = ["use pandas with numpy here .", "install pandas first .\nthen use pandas ."]
    out = read_quality(["pandas frame .", "numpy ."], sources, sources, raw_sources=raw)
    assert out["unsupported_names"] == 100.0       # 1 name (numpy), unsupported; 50.0 if pandas counted
    assert out["unsupported_words"] == 66.67       # frame and numpy of pandas, frame, numpy


def test_the_references_anchor_and_empty_input():
    out = read_quality(REFERENCES, SOURCES, REFERENCES)
    assert out["more_sentences_than_reference"] == 0.0 and out["fragment_rate"] == 0.0
    empty = read_quality([], [], [])
    assert empty["sentences_mean"] == 0.0 and empty["unsupported_words"] == 0.0
    with pytest.raises(ValueError, match="differ in number"):
        read_quality(["a ."], [], ["a ."])


def test_kneser_ney_bigram_by_hand():
    # vocabulary: b and c are seen once -> <UNK>; the text is twice "<s> a <UNK> . </s>", 4 bigram types,
    # each word after exactly one context, so the continuation unigram is 1/4 each.
    # P(a | <s>) = (2 - 0.75) / 2 + 0.75 * 1 / 2 * 1/4 = 0.71875, the same for every bigram of the text
    model = FluencyModel.fit(["a b .", "a c ."], order=2)
    assert model.logscore("a", ["<s>"]) == pytest.approx(math.log2(0.71875))
    assert model.logscore("zzz", ["a"]) == pytest.approx(math.log2(0.71875))   # unseen word -> <UNK>
    assert model.logscore(".", ["a"]) == pytest.approx(math.log2(0.75 / 2 * 0.25))  # only the lower order
    assert model.score(["a zzz ."]) == pytest.approx(math.log2(0.71875))   # 4 tokens with </s>
    assert math.isnan(model.score(["", "\n"]))


CORPUS = ["return the index of the frame .", "return the sum of two numbers .", "convert the file to a string .",
          "return a string .\nthe file is read .", "split the dataset into two parts .", "return the file .",
          "convert degrees to a temperature in celsius .", "read the index file ."]


@pytest.mark.parametrize("order", [2, 3, 4])
def test_the_fast_score_is_nltk_s(order):
    model = FluencyModel.fit(CORPUS, order=order)
    sentences = [["return", "the", "string", "."], ["convert", "a", "zzz", "file", "."], ["the", "the"],
                 ["split", "."], ["numbers", "read", "degrees", "return", "index"]]
    for sentence in sentences:
        padded = ["<s>"] * (order - 1) + sentence + ["</s>"]
        for i in range(order - 1, len(padded)):
            context = padded[i - order + 1:i]
            assert model.logscore(padded[i], context) == pytest.approx(model.lm.logscore(padded[i], context),
                                                                       abs=1e-9)
    last = ["return", "the", "file", "."]
    assert model.sentence_logscores(last)[-1] == pytest.approx(model.lm.logscore("</s>", last[-(order - 1):]),
                                                               abs=1e-9)


def test_fluency_in_read_quality_prefers_the_genre():
    model = FluencyModel.fit(CORPUS)
    fluent = read_quality(["return the index of the file ."], ["x"], ["x"], lm=model)["fluency"]
    shuffled = read_quality(["file the of index the return ."], ["x"], ["x"], lm=model)["fluency"]
    assert fluent == round(model.score(["return the index of the file ."]), 3)
    assert fluent > shuffled
    with pytest.raises(ValueError, match="order must be >= 2"):
        FluencyModel.fit(CORPUS, order=1)


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
