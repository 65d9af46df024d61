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


TEXT = Kind("text", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t))
INTEGER = Kind("integer", pa.types.is_integer)
REAL = Kind("real", lambda t: pa.types.is_floating(t) or pa.types.is_integer(t))
# Text as a user's file may store it: strings, bytes (decoded and repaired by preprocess) or a column
# of nothing but NULLs (Arrow's null type: every row is dropped as empty). Never numbers.
WRITTEN = Kind("text", lambda t: (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
                                  or pa.types.is_large_binary(t) or pa.types.is_null(t)))
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
