"""Readable summaries: detokenized, sentence-cased, spelled as the input spells them."""

from sumpipe.decode.readable import capitalize_first, readable, restore_case, spellings

RAW = ("Return a new sorted list from the items in iterable. A custom key function can be supplied. "
       "Build a DataFrame from NumPy arrays; numpy arrays are DataFrame columns.")


def test_spellings_take_the_most_frequent_non_initial_form():
    spelled = spellings(RAW)
    assert spelled["dataframe"] == "DataFrame"          # twice, never sentence-initial
    assert spelled["numpy"] == "NumPy"                  # "NumPy" once, "numpy" once: the first seen wins the tie
    assert "return" not in spelled and "build" not in spelled  # only ever sentence-initial: no evidence
    assert spelled["a"] == "a"                          # "A custom" opens a sentence and is ignored


def test_restore_case_leaves_unknown_words_alone():
    assert restore_case(["the", "dataframe", "walrus"], {"dataframe": "DataFrame"}) == ["the", "DataFrame", "walrus"]


def test_capitalize_first_skips_leading_symbols_but_not_digits():
    assert capitalize_first("( return x )") == "( Return x )"
    assert capitalize_first("12 items") == "12 items"
    assert capitalize_first("") == ""


def test_readable_detokenizes_and_sentence_cases_each_line():
    text = "return the sorted list of the dataframe ( numpy arrays ) .\nthe key function is used , amy 's way ."
    assert readable(text, RAW) == ("Return the sorted list of the DataFrame (NumPy arrays). "
                                   "The key function is used, amy's way.")


def test_readable_without_raw_only_detokenizes_and_capitalizes():
    assert readable("read the next chunk of rows from the file .") == "Read the next chunk of rows from the file."
    assert readable("") == ""
