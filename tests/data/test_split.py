"""The stable hash split: same id -> same split on every run and machine; ratios respected."""

import os
import subprocess
import sys
from collections import Counter

import pytest

from sumpipe.config import SplitRatios
from sumpipe.data.split import content_id, normalize_split, stable_split, unit_hash
from sumpipe.errors import SumpipeError


def test_unit_hash_is_blake2b_not_pythons_hash() -> None:
    # blake2b(b"split:cnn-0", digest_size=8) as a big-endian fraction of 2**64.
    assert unit_hash("cnn-0", salt="split:") == pytest.approx(0.26143571702931157, abs=1e-15)
    assert 0.0 <= unit_hash("") < 1.0


def test_split_is_the_same_in_a_fresh_process_with_another_hash_seed() -> None:
    ids = [f"doc-{i}" for i in range(200)]
    here = [stable_split(i, SplitRatios()) for i in ids]
    code = (
        "from sumpipe.config import SplitRatios; from sumpipe.data.split import stable_split; "
        f"print(' '.join(stable_split(f'doc-{{i}}', SplitRatios()) for i in range({len(ids)})))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == here


def test_ratios_are_roughly_respected_on_10k_ids() -> None:
    counts = Counter(stable_split(f"example-{i}", SplitRatios(0.8, 0.1, 0.1)) for i in range(10_000))
    assert abs(counts["train"] / 10_000 - 0.8) < 0.015
    assert abs(counts["valid"] / 10_000 - 0.1) < 0.01
    assert abs(counts["test"] / 10_000 - 0.1) < 0.01


def test_degenerate_ratios() -> None:
    assert {stable_split(f"x{i}", SplitRatios(1.0, 0.0, 0.0)) for i in range(500)} == {"train"}
    assert {stable_split(f"x{i}", SplitRatios(0.0, 0.0, 1.0)) for i in range(500)} == {"test"}


@pytest.mark.parametrize(("raw", "name"), [("train", "train"), ("Validation", "valid"), ("val", "valid"),
                                           ("dev", "valid"), (" test ", "test")])
def test_split_aliases(raw: str, name: str) -> None:
    assert normalize_split(raw, "f.jsonl") == name


def test_unknown_split_is_a_one_line_error() -> None:
    with pytest.raises(SumpipeError, match=r"^f\.jsonl: unknown split 'holdout'") as info:
        normalize_split("holdout", "f.jsonl")
    assert "\n" not in str(info.value)


def test_content_id_depends_on_both_texts() -> None:
    assert content_id("a", "b") == content_id("a", "b")
    assert content_id("a", "b") != content_id("a", "c") != content_id("ab", "")
    assert content_id("a", "b", prefix="local-").startswith("local-")
