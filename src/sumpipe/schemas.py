"""What each stage reads from the Parquet files of the stages before it: one contract per artifact
kind, checked when the file is opened (`sumpipe.io.atomic.read_table(path, contract=...)`).

A contract names the columns a reader needs, the kind of each (text, integer, real) and whether
NULL is allowed. The check reads only the Parquet footer (schema and row-group statistics; the
column itself only when a writer left out the NULL counts), so it costs milliseconds, and every
violation is one line naming the file and the column:

    data/processed/test.parquet: column 'source' is int64, expected text (a processed split)

Why contracts and not pyarrow schemas compared for equality: writers legitimately differ in details
a reader does not care about (string vs large_string, int32 vs int64, extra columns such as
`references` or `selected`); a contract states exactly what the reader relies on, and nothing more.
Text is text however it is encoded: `string`, `large_string`, or either dictionary-encoded
(`dictionary<values=string>`, what pandas' `category` and many writers produce). A reader gets plain
values (`plain_columns`: a dictionary column decoded, after `decoded_bytes` has bounded what that costs).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from sumpipe.errors import SumpipeError

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Kind:
    """A family of Arrow types a reader accepts for a column."""

    name: str
    accepts: Callable[[pa.DataType], bool]


def _encoded(accepts: Callable[[pa.DataType], bool]) -> Callable[[pa.DataType], bool]:
    """`accepts`, and dictionary encoding of a type it accepts (an encoding, not another type)."""
    return lambda t: accepts(t) or (pa.types.is_dictionary(t) and accepts(t.value_type))


TEXT = Kind("text", _encoded(lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)))
INTEGER = Kind("integer", _encoded(pa.types.is_integer))
REAL = Kind("real", _encoded(lambda t: pa.types.is_floating(t) or pa.types.is_integer(t)))
# Text as a user's file may store it: strings, bytes (decoded and repaired by preprocess) or a column
# of nothing but NULLs (Arrow's null type: every row is dropped as empty). Never numbers.
WRITTEN = Kind("text", _encoded(lambda t: (pa.types.is_string(t) or pa.types.is_large_string(t)
                                           or pa.types.is_binary(t) or pa.types.is_large_binary(t)
                                           or pa.types.is_null(t))))
WRITTEN_LIST = Kind("a list of texts", lambda t: (pa.types.is_null(t) or (
    (pa.types.is_list(t) or pa.types.is_large_list(t)) and WRITTEN.accepts(t.value_type))))


@dataclass(frozen=True)
class Contract:
    """`columns` a reader needs (name -> Kind); all non-NULL except those in `nullable`; those in
    `optional` are checked only when the file has them (the reader copes without)."""

    what: str
    columns: dict[str, Kind]
    nullable: frozenset[str] = field(default_factory=frozenset)
    optional: frozenset[str] = field(default_factory=frozenset)

    def check_schema(self, path: str | os.PathLike, schema: pa.Schema) -> None:
        """Every needed column is there, of its kind."""
        for name, kind in self.columns.items():
            index = schema.get_field_index(name)
            if index < 0 and name in self.optional:
                continue
            if index < 0:
                raise SumpipeError(f"{path}: column {name!r} is missing ({self.what} needs "
                                   f"{', '.join(self.columns)})")
            found = schema.field(index).type
            if not kind.accepts(found):
                raise SumpipeError(f"{path}: column {name!r} is {found}, expected {kind.name} ({self.what})")

    def check_nulls(self, path: str | os.PathLike, metadata: pq.FileMetaData,
                    read_column: Callable[[str], pa.ChunkedArray]) -> None:
        """No NULL in a non-nullable column: from the row-group statistics, else from the column."""
        for name in self.columns:
            if name in self.nullable:
                continue
            nulls = _null_count(metadata, name)
            if nulls is None:
                nulls = read_column(name).null_count
            if nulls:
                raise SumpipeError(f"{path}: column {name!r} has {nulls:,} NULL value(s) ({self.what})")


def _null_count(metadata: pq.FileMetaData, name: str) -> int | None:
    """NULLs in column `name` per the footer's statistics; None when a row group lacks them."""
    index = metadata.schema.to_arrow_schema().get_field_index(name)
    if index < 0:
        return None
    total = 0
    for g in range(metadata.num_row_groups):
        column = _leaf(metadata.row_group(g), name)
        stats = column.statistics if column is not None else None
        if stats is None or not stats.has_null_count:
            return None
        total += stats.null_count
    return total


def _leaf(row_group: pq.RowGroupMetaData, name: str) -> pq.ColumnChunkMetaData | None:
    for i in range(row_group.num_columns):
        column = row_group.column(i)
        if column.path_in_schema == name:
            return column
    return None


def decoded_bytes(array: pa.Array | pa.ChunkedArray) -> int:
    """The bytes `array` takes once its dictionary-encoded values are decoded, computed without decoding:
    a Parquet file of a few KB can hold one long string repeated a million times."""
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        return sum(decoded_bytes(chunk) for chunk in array.chunks)
    if isinstance(array, pa.DictionaryArray):
        values = array.dictionary.type
        if not any(test(values) for test in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                                             pa.types.is_large_binary)):  # numbers: the mean value's size a row
            return array.indices.nbytes + len(array) * -(-array.dictionary.nbytes // max(1, len(array.dictionary)))
        lengths = pc.fill_null(pc.binary_length(array.dictionary), 0).take(pc.fill_null(array.indices, 0))
        return int(pc.sum(lengths).as_py() or 0) + array.indices.nbytes
    if isinstance(array, (pa.ListArray, pa.LargeListArray)):
        return decoded_bytes(array.flatten()) + array.offsets.nbytes
    if isinstance(array, pa.StructArray):
        return sum(decoded_bytes(array.field(i)) for i in range(array.type.num_fields))
    return array.nbytes


def plain_columns(data: pa.Table | pa.RecordBatch) -> pa.Table | pa.RecordBatch:
    """`data` with every dictionary-encoded column decoded to its value type (`dictionary<values=string>`
    -> `string`), so a stage sees plain values (`str` in Python, not pandas' `category`). Callers bound
    the cost first with `decoded_bytes`."""
    if not any(pa.types.is_dictionary(t) for t in data.schema.types):
        return data
    columns = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in data.columns]
    fields = [pa.field(f.name, c.type, f.nullable) for f, c in zip(data.schema, columns)]
    make = pa.Table.from_arrays if isinstance(data, pa.Table) else pa.RecordBatch.from_arrays
    return make(columns, schema=pa.schema(fields, metadata=data.schema.metadata))


# ---- the artifacts ----------------------------------------------------------------------------
# data/raw/<split>.parquet (download, or a user's own files): what preprocess reads. Text may be bytes or
# NULL (repaired, or dropped and counted), never a number: a `source` of ints would otherwise become the
# digits' text and train a model on it. `reference`/`references` are alternatives (preprocess needs one).
RAW = Contract("a raw split", {"source": WRITTEN, "reference": WRITTEN, "references": WRITTEN_LIST},
               nullable=frozenset({"source", "reference", "references"}),
               optional=frozenset({"reference", "references"}))
# data/processed/<split>.parquet (preprocess): what vocab, extract, subword, pretrain, extractive and
# evaluate read
PROCESSED = Contract("a processed split", {"id": TEXT, "source": TEXT, "reference": TEXT})
# data/extracted/<selection>/<split>.parquet (extract): what train and decode read
EXTRACTED = Contract("an extracted split", {"id": TEXT, "source": TEXT, "reference": TEXT})
# vocab.parquet (vocab stage, model folders)
VOCABULARY = Contract("a vocabulary", {"token": TEXT, "count": INTEGER})
# data/extractive/corpus.parquet (extractive-fit): row "" holds the unseen-term idf
CORPUS_STATS = Contract("corpus statistics", {"term": TEXT, "idf": REAL, "entropy": REAL})
# predictions/<system>/<split>.parquet (decode, extractive): what evaluate reads
PREDICTIONS = Contract("predictions", {"id": TEXT, "prediction": TEXT})


def references_of(df: pd.DataFrame) -> list:
    """Each row's references: the `references` list when present (DUC), else `reference`."""
    if "reference" not in df.columns and "references" not in df.columns:
        raise SumpipeError("no `reference` or `references` column to score against")
    firsts = df["reference"] if "reference" in df.columns else [""] * len(df)
    if "references" not in df.columns:
        return [[ref] for ref in firsts]
    return [list(refs) if refs is not None and len(refs) else [ref] for refs, ref in zip(df["references"], firsts)]
