"""Hansen & Petersen 2019's synthetic numerals data set, generated with num2words.

Two kinds of examples, alternating (even index: ordered, odd index: random), so `size` examples hold
ceil(size/2) ordered and floor(size/2) random ones:

    ordered: source = L consecutive numbers in digits,  reference = the next L numbers in words
             "7 8 9"  -> "ten eleven twelve"
    random:  source = L random numbers in digits,       reference = the same numbers in words
             "42 7 19" -> "forty-two seven nineteen"

Choices Hansen & Petersen 2019 leave open (they say only "up to a defined maximum length"): the length L is uniform
in [2, max_length] (one number is not a sequence); numbers are in [0, max_number], and an ordered
sequence starts low enough that its continuation stays in range (config requires
max_number >= 2 * max_length - 1); a random sequence that happens to be an ordered run is drawn
again, so the source alone says which task an example is; words are num2words' English as it
writes them ("twenty-one", "one hundred"). The paper splits 33,500/16,500 train/validation; sumpipe
needs a test split too, so the stable id hash with `data.split_ratios` decides. Deterministic:
`random.Random(data.seed)`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from num2words import num2words

from sumpipe.config import DataConfig
from sumpipe.data.datasets import DATASETS, Dataset, Rows
from sumpipe.validation import MAX_COUNT, MAX_POSITIONS, child_key, require, require_at_most


@dataclass(frozen=True)
class NumeralsOptions:
    """`data.options.numerals`: how many examples, the longest sequence, the largest number."""

    size: int = 2000
    max_length: int = 10
    max_number: int = 100

    def check(self, key: str) -> None:
        require(self.size >= 3, child_key(key, "size"), "must be >= 3")
        require(self.max_length >= 2, child_key(key, "max_length"), "must be >= 2")
        require_at_most(self.size, MAX_COUNT, child_key(key, "size"))
        require_at_most(self.max_length, MAX_POSITIONS, child_key(key, "max_length"))
        require_at_most(self.max_number, MAX_COUNT, child_key(key, "max_number"))
        require(self.max_number >= 2 * self.max_length - 1, child_key(key, "max_number"),
                "must be >= 2 * max_length - 1 (an ordered sequence and its continuation must fit)")


def _words(numbers: list[int]) -> str:
    return " ".join(num2words(n) for n in numbers)


def _digits(numbers: list[int]) -> str:
    return " ".join(str(n) for n in numbers)


def _is_run(numbers: list[int]) -> bool:
    return all(b == a + 1 for a, b in zip(numbers, numbers[1:]))


def ordered_example(rng: random.Random, length: int, max_number: int) -> tuple[str, str]:
    start = rng.randint(0, max_number - 2 * length + 1)
    numbers = list(range(start, start + 2 * length))
    return _digits(numbers[:length]), _words(numbers[length:])


def random_example(rng: random.Random, length: int, max_number: int) -> tuple[str, str]:
    while True:
        numbers = [rng.randint(0, max_number) for _ in range(length)]
        if not _is_run(numbers):
            return _digits(numbers), _words(numbers)


def build_numerals(cfg: NumeralsOptions, seed: int) -> list[dict]:
    """`cfg.size` examples with ids "numerals-ordered-000000", "numerals-random-000001", ..."""
    rng = random.Random(seed)
    examples = []
    for index in range(cfg.size):
        length = rng.randint(2, cfg.max_length)
        kind = "ordered" if index % 2 == 0 else "random"
        make = ordered_example if kind == "ordered" else random_example
        source, reference = make(rng, length, cfg.max_number)
        examples.append({"id": f"numerals-{kind}-{index:06d}", "source": source, "reference": reference})
    return examples


def load_numerals(cfg: DataConfig, options: NumeralsOptions) -> Rows:
    """The `numerals` data set of `data.options.numerals`, generated from `cfg.seed`."""
    return build_numerals(options, cfg.seed), {"size": options.size}


DATASETS.register("numerals", Dataset(load=load_numerals, options=NumeralsOptions))
