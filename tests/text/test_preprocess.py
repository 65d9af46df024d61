"""Morozovskii 2022 Alg. 2 end to end on single documents (the thesis' golden examples and the fixed quirks), then
the `preprocess` stage function and command on tiny raw directories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from sumpipe.config import PreprocessConfig
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.text.preprocess import (
    MIN_TEXTS_PER_WORKER,
    preprocess,
    preprocess_document,
    preprocess_many,
    preprocess_sentences,
    preprocess_text,
    truncate_tokens,
)

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

# --------------------------------------------------------------------------------------------
# The stage: `preprocess` on tiny raw directories, and its command
# --------------------------------------------------------------------------------------------
def write_split(raw: Path, name: str, columns: dict[str, list], types: dict[str, pa.DataType] | None = None) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    types = types or {}
    table = pa.table({k: pa.array(v, type=types.get(k)) for k, v in columns.items()})
    pq.write_table(table, raw / f"{name}.parquet")


@pytest.fixture
def raw_dir(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    write_split(raw, "train", {
        "id": ["a", "b", "c", "d", "e"],
        "source": ["Amy's dog barked. It ran away!", "   ", "Caf\ufffd opened today.", "-- () --", "Hello world."],
        "reference": ["Amy's dog barked.", "Something.", "A caf\ufffd opened.", "x", None],
        "extra": [1, 2, 3, 4, 5],
    })
    write_split(raw, "valid", {
        "id": ["v1", "v2"],
        "source": ["Hi.", "Good morning, everyone."],
        "reference": ["Hello.", "Morning."],
        "extra": [6, 7],
    })
    write_split(raw, "test", {
        "id": ["t1", "t2"],
        "source": ["The U.S.A. won 82% of votes.", "Nothing here."],
        "reference": ["U.S.A. wins.", ""],
        "references": [["U.S.A. wins.", "", "It's a win."], ["", ""]],
        "extra": [8, 9],
    })
    return raw


def test_stage_output_and_exact_stats(raw_dir: Path, tmp_path: Path) -> None:
    cfg = PreprocessConfig(min_source_tokens=3, workers=1)
    stats = preprocess(raw_dir, tmp_path / "processed", cfg, tmp_path / "metrics" / "preprocess.json")

    train = pq.read_table(tmp_path / "processed" / "train.parquet").to_pylist()
    assert train == [
        {"id": "a", "source": "amy 's dog barked .\nit ran away !", "reference": "amy 's dog barked .", "extra": 1},
        {"id": "c", "source": "caf opened today .", "reference": "a caf opened .", "extra": 3},
    ]
    valid = pq.read_table(tmp_path / "processed" / "valid.parquet").to_pylist()
    assert valid == [{"id": "v2", "source": "good morning , everyone .", "reference": "morning .", "extra": 7}]
    test = pq.read_table(tmp_path / "processed" / "test.parquet")
    assert test.column_names == ["id", "source", "reference", "references", "extra"]
    assert test.schema.field("references").type == pa.list_(pa.string())
    assert test.to_pylist() == [{
        "id": "t1", "source": "the u.s.a. won 82 % of votes .", "reference": "u.s.a. wins .",
        "references": ["u.s.a. wins .", "it is a win ."], "extra": 8}]

    zero = {"dropped_empty": 0, "dropped_short": 0, "repaired": 0, "empty_references": 0, "truncated": 0}
    assert stats["train"] == {**zero, "rows_in": 5, "rows_out": 2, "dropped_empty": 3, "repaired": 1,
                              "source_tokens": 13, "reference_tokens": 9,
                              "mean_source_tokens": 6.5, "mean_reference_tokens": 4.5}
    assert stats["valid"] == {**zero, "rows_in": 2, "rows_out": 1, "dropped_short": 1,
                              "source_tokens": 5, "reference_tokens": 2,
                              "mean_source_tokens": 5.0, "mean_reference_tokens": 2.0}
    assert stats["test"] == {**zero, "rows_in": 2, "rows_out": 1, "dropped_empty": 1, "empty_references": 3,
                             "source_tokens": 8, "reference_tokens": 3,
                             "mean_source_tokens": 8.0, "mean_reference_tokens": 3.0}
    assert stats["total"] == {"rows_in": 9, "rows_out": 4, "dropped_empty": 4, "dropped_short": 1,
                              "repaired": 1, "empty_references": 3, "truncated": 0,
                              "source_tokens": 26, "reference_tokens": 14,
                              "mean_source_tokens": 6.5, "mean_reference_tokens": 3.5}
    assert json.loads((tmp_path / "metrics" / "preprocess.json").read_text()) == stats


def test_max_source_tokens_truncates_and_counts(raw_dir: Path, tmp_path: Path) -> None:
    cfg = PreprocessConfig(max_source_tokens=6, workers=1)
    stats = preprocess(raw_dir, tmp_path / "out", cfg, tmp_path / "m.json")
    train = pq.read_table(tmp_path / "out" / "train.parquet").column("source").to_pylist()
    assert train[0] == "amy 's dog barked .\nit"
    assert stats["train"]["truncated"] == 1 and stats["test"]["truncated"] == 1
    assert stats["train"]["source_tokens"] == 6 + 4   # a (cut to 6), c; e has no reference


def test_workers_do_not_change_the_output(tmp_path: Path) -> None:
    n = MIN_TEXTS_PER_WORKER  # rows; with their references, enough texts for two workers
    sources = [f"Story {i}: Mr. Smith's {i}% stake won't fall. It's \u00a3{i}.{i} now!" for i in range(n)]
    write_split(tmp_path / "raw", "train", {"id": [str(i) for i in range(n)], "source": sources,
                                            "reference": [s[:20] for s in sources]})
    one = preprocess(tmp_path / "raw", tmp_path / "p1", PreprocessConfig(workers=1), tmp_path / "m1.json")
    two = preprocess(tmp_path / "raw", tmp_path / "p2", PreprocessConfig(workers=2), tmp_path / "m2.json")
    assert one == two
    assert pq.read_table(tmp_path / "p1" / "train.parquet") == pq.read_table(tmp_path / "p2" / "train.parquet")
    texts = sources + sources
    assert preprocess_many(texts, workers=2) == preprocess_many(texts, workers=1)


def test_bytes_that_are_not_utf8_are_repaired(tmp_path: Path) -> None:
    write_split(tmp_path / "raw", "train", {"source": [b"caf\xe9 au lait", b"ok"], "reference": ["good", "x"]},
                types={"source": pa.binary()})
    stats = preprocess(tmp_path / "raw", tmp_path / "out", PreprocessConfig(workers=1), tmp_path / "m.json")
    assert pq.read_table(tmp_path / "out" / "train.parquet").column("source").to_pylist() == ["caf au lait", "ok"]
    assert stats["train"]["repaired"] == 1


def test_missing_raw_data_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SumpipeError, match="run `sumpipe download` first"):
        preprocess(tmp_path / "nothing", tmp_path / "out", PreprocessConfig(), tmp_path / "m.json")


def test_missing_columns_is_a_one_line_error(tmp_path: Path) -> None:
    write_split(tmp_path / "raw", "train", {"text": ["a"]})
    with pytest.raises(SumpipeError, match="needs columns `source` and `reference`"):
        preprocess(tmp_path / "raw", tmp_path / "out", PreprocessConfig(), tmp_path / "m.json")


def test_nothing_left_is_a_one_line_error(tmp_path: Path) -> None:
    write_split(tmp_path / "raw", "train", {"source": ["", "--"], "reference": ["a", "b"]})
    with pytest.raises(SumpipeError, match="no example left after preprocessing"):
        preprocess(tmp_path / "raw", tmp_path / "out", PreprocessConfig(), tmp_path / "m.json")
    assert not (tmp_path / "out").exists()


def test_bad_params_name_the_key() -> None:
    from sumpipe.config import params_from_dict

    with pytest.raises(ConfigError, match="preprocess.line_breaks"):
        params_from_dict({"preprocess": {"line_breaks": "sometimes"}})
    with pytest.raises(ConfigError, match="preprocess.workers"):
        params_from_dict({"preprocess": {"workers": 0}})


def test_command_runs_the_stage(raw_dir: Path, tmp_path: Path, cli) -> None:
    paths = {"raw": str(raw_dir), "processed": str(tmp_path / "processed"), "metrics": str(tmp_path / "metrics")}
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"paths": paths, "preprocess": {"workers": 1}}))
    result = cli("preprocess", "--params", str(params))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("preprocess: 5/9 rows kept (train 2, valid 2, test 1)")
    assert (tmp_path / "metrics" / "preprocess.json").is_file()


def test_real_cnn_stories(shared_data: Path) -> None:
    import gzip

    with gzip.open(shared_data / "cnndm" / "cnn_stories.jsonl.gz", "rt", encoding="utf-8") as lines:
        stories = [json.loads(next(lines)) for _ in range(30)]
    for story in stories:
        text = preprocess_text(story["source"])
        assert text and text.isascii() and text == text.lower()
        assert "(cnn)" not in text and "  " not in text and "\n\n" not in text
        assert len(text.split("\n")) >= 5


def test_real_gigaword_is_nearly_a_fixed_point(shared_data: Path) -> None:
    import gzip

    with gzip.open(shared_data / "gigaword" / "gigaword_pairs.jsonl.gz", "rt", encoding="utf-8") as lines:
        rows = [json.loads(next(lines)) for _ in range(500)]
    unchanged = 0
    for row in rows:
        source = row["source"]
        text = preprocess_text(source)
        # Digit masks survive untouched; no "<unk>" token (the vocabulary's special) is produced.
        assert [t for t in text.split() if "#" in t] == [t for t in source.split() if "#" in t]
        assert "<unk>" not in text and "<" not in text.split()
        unchanged += text.split() == source.split()
    assert unchanged >= 0.8 * len(rows)   # 86 %: the rest differ by the documented mappings only


@pytest.mark.parametrize(("column", "values", "kind"), [
    ("source", [1, 2], "int64"),
    ("source", [1.5, 2.5], "double"),
    ("reference", [7, 8], "int64"),
    ("references", [[1, 2], [3]], "list<element: int64>"),
])
def test_numbers_instead_of_text_are_refused_in_one_line(tmp_path: Path, column: str, values: list, kind: str) -> None:
    """A raw split whose text column holds numbers would become the digits' text and train a model on it:
    refused, naming the file and the column (the raw split's contract, sumpipe.schemas.RAW)."""
    columns = {"id": ["a", "b"], "source": ["Some text.", "More."], "reference": ["Text.", "More."], column: values}
    write_split(tmp_path / "raw", "train", columns)
    expected = (f"{tmp_path / 'raw' / 'train.parquet'}: column '{column}' is {kind}, expected "
                f"{'a list of texts' if column == 'references' else 'text'} (a raw split)")
    with pytest.raises(SumpipeError, match=f"^{re.escape(expected)}$"):
        preprocess(tmp_path / "raw", tmp_path / "out", PreprocessConfig(), tmp_path / "m.json")
    assert not (tmp_path / "out").exists()


def test_bytes_and_large_strings_are_still_text(tmp_path: Path) -> None:
    """What the contract lets through besides strings: binary text (decoded and repaired) and large strings."""
    write_split(tmp_path / "raw", "train", {"source": [b"Caf\xe9 opened.", b"A dog barked."],
                                            "reference": ["Cafe.", "Dog."]},
                types={"source": pa.binary(), "reference": pa.large_string()})
    report = preprocess(tmp_path / "raw", tmp_path / "out", PreprocessConfig(), tmp_path / "m.json")
    assert (report["train"]["rows_out"], report["train"]["repaired"]) == (2, 1)
