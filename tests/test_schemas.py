"""sumpipe.schemas: the data contract's reference columns (`references_of`)."""

import pandas as pd
import pytest

from sumpipe.errors import SumpipeError
from sumpipe.schemas import references_of


def test_references_of_prefers_the_list_and_falls_back_to_the_reference() -> None:
    frame = pd.DataFrame({"reference": ["a", "b", "c"], "references": [["a", "a2"], [], None]})
    assert references_of(frame) == [["a", "a2"], ["b"], ["c"]]
    assert references_of(frame[["reference"]]) == [["a"], ["b"], ["c"]]
    assert references_of(pd.DataFrame({"references": [["x", "y"]]})) == [["x", "y"]]


def test_no_reference_column_is_a_one_line_error() -> None:
    with pytest.raises(SumpipeError, match="^no `reference` or `references` column to score against$"):
        references_of(pd.DataFrame({"id": ["a"]}))


def test_an_optional_column_is_checked_only_when_present() -> None:
    import pyarrow as pa

    from sumpipe.schemas import RAW

    RAW.check_schema("raw.parquet", pa.schema([("source", pa.string()), ("references", pa.list_(pa.string()))]))
    RAW.check_schema("raw.parquet", pa.schema([("source", pa.binary()), ("reference", pa.null())]))
    with pytest.raises(SumpipeError, match=r"^raw.parquet: column 'reference' is double, expected text \(a raw split"):
        RAW.check_schema("raw.parquet", pa.schema([("source", pa.string()), ("reference", pa.float64())]))
    with pytest.raises(SumpipeError, match="^raw.parquet: column 'source' is missing"):
        RAW.check_schema("raw.parquet", pa.schema([("reference", pa.string())]))


# ---- text however it is encoded (a dictionary-encoded `source` was "expected text") --------------------
def _text_types():
    import pyarrow as pa

    return [pa.string(), pa.large_string(), pa.dictionary(pa.int8(), pa.string()),
            pa.dictionary(pa.int32(), pa.large_string())]


def test_text_is_text_however_it_is_encoded(tmp_path) -> None:
    import pyarrow as pa

    from sumpipe.schemas import PROCESSED, TEXT

    for kind in _text_types():
        assert TEXT.accepts(kind), kind
        PROCESSED.check_schema("p.parquet", pa.schema([("id", kind), ("source", kind), ("reference", kind)]))
    for kind in (pa.int64(), pa.dictionary(pa.int8(), pa.int64()), pa.binary()):
        assert not TEXT.accepts(kind), kind


def test_plain_columns_decodes_dictionaries_to_their_values() -> None:
    import pyarrow as pa

    from sumpipe.schemas import decoded_bytes, plain_columns

    source = pa.array(["the cat", "a dog", "the cat"]).dictionary_encode()
    table = pa.table({"source": source, "n": [1, 2, 3]})
    plain = plain_columns(table)
    assert plain.schema.field("source").type == pa.string()
    assert plain.column("source").to_pylist() == ["the cat", "a dog", "the cat"]
    assert plain.to_pandas()["source"].tolist() == ["the cat", "a dog", "the cat"]  # str, not category
    assert plain_columns(plain) is plain
    assert decoded_bytes(source) == 7 + 5 + 7 + source.indices.nbytes  # the text's bytes, as if decoded
