"""The pydoc corpus: docstring -> (summary, description) on hand-written docstrings, and the build."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

from sumpipe.data.pydoc_corpus import PydocOptions, build_pydoc, clean_markup, docstrings, split_docstring


def split(doc: str) -> tuple[str, str] | None:
    return split_docstring(inspect.cleandoc(doc))


def test_numpydoc_summary_joined_and_description_stops_at_parameters() -> None:
    doc = '''Compute the weighted
    average of an array.

    The average is taken over the flattened array by default,
    otherwise over the specified axis.

    Weights are normalised so that they sum to one.

    Parameters
    ----------
    a : array_like
        Data to average.

    Examples
    --------
    >>> average([1, 2])
    1.5
    '''
    assert split(doc) == (
        "Compute the weighted average of an array.",
        "The average is taken over the flattened array by default, otherwise over the specified axis.\n"
        "Weights are normalised so that they sum to one.",
    )


def test_google_sections_stop_and_literal_block_with_its_intro_is_dropped() -> None:
    doc = '''Open a connection to the server.

    The connection is retried until it succeeds. For example::

        conn = connect("host")
        conn.close()

    Retries back off exponentially.

    Args:
        host: where to connect.
    '''
    assert split(doc) == ("Open a connection to the server.",
                          "The connection is retried until it succeeds.\nRetries back off exponentially.")


def test_google_returns_with_inline_text_stops() -> None:
    doc = "Mark the start.\n\nA key difference is threads.\n\nReturns: A range handle."
    assert split_docstring(doc) == ("Mark the start.", "A key difference is threads.")


def test_rest_field_list_stops_even_without_blank_line() -> None:
    doc = '''Parse a configuration file.

    Sections are read in order; later values win.
    :param path: the file.
    :returns: a mapping.
    '''
    assert split(doc) == ("Parse a configuration file.", "Sections are read in order; later values win.")


def test_doctest_fence_and_markup() -> None:
    doc = '''Sort the items in place.

    The sort is stable:

    >>> xs = [3, 1, 2]
    >>> xs.sort()

    It uses :func:`sorted` under the hood, see ``list.sort`` and
    :class:`~collections.abc.MutableSequence`.

    ```python
    xs.sort(key=len)
    ```

    Ties keep their **original** order.
    '''
    assert split(doc) == (
        "Sort the items in place.",
        "It uses sorted under the hood, see list.sort and MutableSequence.\nTies keep their original order.",
    )


def test_grid_and_simple_tables_are_dropped() -> None:
    doc = '''Convert between units.

    Supported units are listed below.

    +------+--------+
    | unit | factor |
    +======+========+
    | m    | 1      |
    +------+--------+

    =====  =====
    unit   factor
    =====  =====
    km     1000
    =====  =====

    Unknown units raise an error.
    '''
    assert split(doc) == ("Convert between units.", "Supported units are listed below.\nUnknown units raise an error.")


def test_signature_line_skipped_directives_dropped_notes_stop() -> None:
    doc = '''dumps(obj, protocol=None) -> bytes

    Return the pickled representation of the object.

    The protocol defaults to the highest one.

    .. versionadded:: 3.8
       The protocol argument.

    .. note::
       Pickles are not secure.

    Objects must be picklable.

    Notes
    -----
    Never reached.
    '''
    assert split(doc) == ("Return the pickled representation of the object.",
                          "The protocol defaults to the highest one.\nObjects must be picklable.")


def test_title_before_summary_is_skipped_and_a_later_heading_stops() -> None:
    doc = '''Overview
    ========

    Tools for working with colours.

    Colours are stored as RGB triples.

    Details
    -------
    Not part of the description.
    '''
    assert split(doc) == ("Tools for working with colours.", "Colours are stored as RGB triples.")


def test_math_and_the_rest_of_its_sentence_are_dropped() -> None:
    doc = '''Evaluate the polynomial.

    The value is computed as

    .. math:: p(x) = \\sum_i c_i x^i

    where the coefficients come from the constructor.

    Horner's scheme needs :math:`O(n)` work.

    Evaluation is vectorised over x.
    '''
    assert split(doc) == ("Evaluate the polynomial.", "Evaluation is vectorised over x.")


def test_indented_list_after_colon_and_bullets() -> None:
    doc = '''Return true if the object is a code object.

    Code objects provide these attributes:
        co_argcount     number of arguments
        co_code         raw bytecode
    Other objects are rejected.

    Two cases are handled:

    - plain functions, and
    - bound methods.
    '''
    assert split(doc) == (
        "Return true if the object is a code object.",
        "Other objects are rejected.\nTwo cases are handled:\nplain functions, and\nbound methods.",
    )


def test_no_summary() -> None:
    assert split_docstring(">>> f()\n1") is None
    assert split_docstring("%(klass)s docs\n\nFilled at import time.") is None


def test_clean_markup() -> None:
    assert clean_markup(":py:meth:`Foo.bar`  and `the docs <https://x.org>`_ [1]_") == "Foo.bar and the docs"
    assert clean_markup(":class:`Mapping <collections.abc.Mapping>` of *args* to ``values``") == (
        "Mapping of args to values"
    )
    assert clean_markup("takes *args and **kwargs") == "takes *args and **kwargs"


def test_docstrings_walks_classes_functions_and_conditional_definitions() -> None:
    source = textwrap.dedent('''
        """Module doc."""
        class A:
            """Class doc."""
            def f(self):
                """Method doc."""
            class B:
                """Nested doc."""
        if True:
            async def g():
                """Coroutine doc."""
        def undocumented():
            pass
    ''')
    assert list(docstrings(ast.parse(source))) == [
        ("", "Module doc."), ("A", "Class doc."), ("A.f", "Method doc."), ("A.B", "Nested doc."),
        ("g", "Coroutine doc."),
    ]


DESCRIPTION = "It does the same thing as every other function here, which is why it exists twice in this package."


def _write_package(root: Path, order: list[str]) -> None:
    files = {
        "__init__.py": '"""A tiny package.\n\nIt has a description that is long enough to be kept as one pair."""\n',
        "beta.py": f'def second():\n    """Do the second thing.\n\n    {DESCRIPTION}\n    """\n',
        "alpha.py": f'def first():\n    """Do the first thing.\n\n    {DESCRIPTION}\n    """\n'
                    'def short():\n    """Do little.\n\n    Too short.\n    """\n',
        "tests/test_x.py": '"""Test module.\n\nThis docstring is long enough but lives in a tests folder, '
                           'so it is skipped."""\n',
    }
    for name in order:
        path = root / "tinypkg_sumpipe" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[name])


@pytest.mark.parametrize("order", [["__init__.py", "alpha.py", "beta.py", "tests/test_x.py"],
                                   ["tests/test_x.py", "beta.py", "alpha.py", "__init__.py"]])
@pytest.mark.parametrize("workers", [1, 2])  # the corpus does not depend on the number of processes
def test_build_on_a_package_is_sorted_filtered_and_deduplicated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: list[str], workers: int
) -> None:
    _write_package(tmp_path, order)
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = PydocOptions(packages=["tinypkg_sumpipe", "no_such_package_xyz"], min_source_words=8, workers=workers)
    pairs, info = build_pydoc(cfg)
    assert pairs == [
        {"id": "tinypkg_sumpipe:tinypkg_sumpipe",
         "source": "It has a description that is long enough to be kept as one pair.",
         "reference": "A tiny package."},
        {"id": "tinypkg_sumpipe:tinypkg_sumpipe.alpha.first", "source": DESCRIPTION,
         "reference": "Do the first thing."},
    ]
    assert info["duplicates"] == 1  # beta.second has the same description; alpha sorts first
    assert info["out_of_range"] == 1  # "Too short."
    assert info["packages_not_installed"] == ["no_such_package_xyz"]
    assert info["files"] == 3  # tests/ skipped
    assert "tinypkg_sumpipe" in info["packages"]


@pytest.fixture(scope="module")
def stdlib_corpus() -> tuple[list[dict], dict]:
    return build_pydoc(PydocOptions(packages=["stdlib"]))


@pytest.mark.slow
def test_stdlib_corpus_is_large_sorted_and_unique(stdlib_corpus: tuple[list[dict], dict]) -> None:
    pairs, info = stdlib_corpus
    assert len(pairs) > 1000
    ids = [p["id"] for p in pairs]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert len({p["source"] for p in pairs}) == len(pairs)
    assert all(p["id"].startswith("stdlib:") for p in pairs)
    assert info["packages"]["stdlib"] == f"python {sys.version.split()[0]}"
    by_id = {p["id"]: p for p in pairs}
    # A well-known docstring, to show what a pair looks like.
    assert by_id["stdlib:gzip"]["reference"] == "Functions that read and write gzipped files."
    for pair in pairs:
        assert 3 <= len(pair["reference"].split()) <= 40 and 12 <= len(pair["source"].split()) <= 400
        assert not any(line.startswith((">>>", ":param")) for line in pair["source"].splitlines())


def test_licence_notes_and_legal_capitals_are_not_description() -> None:
    doc = '''Fit splines to data.

    The knots are chosen automatically.

    Copyright 2002 Someone, all rights reserved.

    NO WARRANTY IS EXPRESSED OR IMPLIED. USE AT YOUR OWN RISK.

    TODO(someone): support weights.

    Smoothing is controlled by one factor.
    '''
    assert split(doc) == ("Fit splines to data.",
                          "The knots are chosen automatically.\nSmoothing is controlled by one factor.")


def test_is_prose() -> None:
    from sumpipe.data.pydoc_corpus import is_prose

    assert is_prose("Return the sum.", "The sum of all items in the list is returned as a float.")
    assert not is_prose("Semantics are:", "The sum of all items in the list is returned as a float.")
    assert not is_prose("Return (entry, label), .", "The sum of all items.")
    assert not is_prose("Map types.", 'float64 -> "%10.0g" float32 -> "%9.0g" int64 -> "%9.0g" as needed')
    assert not is_prose("Integrate.", "computes int_t y(t) frac{dx}{dt} over the curve of points here")
