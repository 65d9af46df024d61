"""Hansen & Petersen 2019's numerals data: ordered -> continuation in words, random -> the same numbers in words."""

import pytest
from num2words import num2words

from sumpipe.config import params_from_dict
from sumpipe.data.datasets import dataset_of
from sumpipe.data.numerals import NumeralsOptions, build_numerals
from sumpipe.errors import ConfigError


def test_exact_examples_for_a_fixed_seed() -> None:
    examples = build_numerals(NumeralsOptions(size=4, max_length=4, max_number=20), seed=0)
    assert examples == [
        {"id": "numerals-ordered-000000", "source": "13 14 15", "reference": "sixteen seventeen eighteen"},
        {"id": "numerals-random-000001", "source": "8 16", "reference": "eight sixteen"},
        {"id": "numerals-ordered-000002", "source": "12 13 14", "reference": "fifteen sixteen seventeen"},
        {"id": "numerals-random-000003", "source": "15 11 18", "reference": "fifteen eleven eighteen"},
    ]


def test_invariants_over_many_examples() -> None:
    cfg = NumeralsOptions(size=600, max_length=7, max_number=30)
    examples = build_numerals(cfg, seed=5)
    assert len(examples) == 600
    assert sum(e["id"].startswith("numerals-ordered-") for e in examples) == 300
    lengths = set()
    for e in examples:
        numbers = [int(x) for x in e["source"].split()]
        lengths.add(len(numbers))
        assert all(0 <= n <= cfg.max_number for n in numbers)
        is_run = all(b == a + 1 for a, b in zip(numbers, numbers[1:]))
        if "ordered" in e["id"]:
            assert is_run
            continuation = range(numbers[-1] + 1, numbers[-1] + 1 + len(numbers))
            assert max(continuation) <= cfg.max_number
            assert e["reference"] == " ".join(num2words(n) for n in continuation)
        else:
            assert not is_run  # the source alone tells which task it is
            assert e["reference"] == " ".join(num2words(n) for n in numbers)
    assert lengths == set(range(2, 8))


def test_seed_changes_the_data_and_is_reproducible() -> None:
    cfg = NumeralsOptions(size=20)
    assert build_numerals(cfg, seed=1) == build_numerals(cfg, seed=1)
    assert build_numerals(cfg, seed=1) != build_numerals(cfg, seed=2)


def test_max_number_must_leave_room_for_the_continuation() -> None:
    params = params_from_dict({"data": {"dataset": "numerals",
                                        "options": {"numerals": {"max_length": 45, "max_number": 50}}}})
    with pytest.raises(ConfigError, match=r"^data\.options\.numerals\.max_number: must be >= 2 \* max_length - 1"):
        dataset_of(params.data)
