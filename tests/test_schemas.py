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
