"""The generic validator: dataclasses from mappings, one-line errors naming the dotted key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from sumpipe.errors import ConfigError
from sumpipe.validation import MAX_WIDTH, child_key, from_dict, require, require_at_most, require_name


@dataclass(frozen=True)
class Inner:
    size: int = 1
    kind: Literal["a", "b"] = "a"

    def check(self, key: str) -> None:
        require(self.size >= 1, child_key(key, "size"), "must be >= 1")


@dataclass(frozen=True)
class Outer:
    plain: Inner = field(default_factory=Inner)
    tuned: Inner = field(default_factory=lambda: Inner(size=7, kind="b"))
    names: list[str] = field(default_factory=list)
    rate: float = 0.5


def test_a_nested_section_overrides_its_own_default_key_by_key() -> None:
    outer = from_dict(Outer, {"plain": {"size": 3}, "tuned": {"size": 4}})
    assert outer.plain == Inner(size=3, kind="a")  # the rest from the class's default
    assert outer.tuned == Inner(size=4, kind="b")  # the rest from the field's default instance, not the class's
    assert from_dict(Outer, {"tuned": None}).tuned == Inner(size=7, kind="b")
    assert from_dict(Outer, {}).tuned == Inner(size=7, kind="b")


def test_keys_left_out_come_from_base() -> None:
    base = Outer(rate=0.25, names=["x"], tuned=Inner(size=9, kind="a"))
    merged = from_dict(Outer, {"tuned": {"kind": "b"}}, "s", base)
    assert merged == Outer(rate=0.25, names=["x"], tuned=Inner(size=9, kind="b"))


@pytest.mark.parametrize(("data", "message"), [
    ({"tuned": {"size": 0}}, "outer.tuned.size: must be >= 1"),
    ({"tuned": {"sise": 2}}, "outer.tuned.sise: unknown key (known: kind, size)"),
    ({"tuned": {"kind": "c"}}, "outer.tuned.kind: expected one of 'a', 'b', got 'c'"),
    ({"tuned": [1]}, "outer.tuned: expected a mapping, got [1]"),
    ({"rate": True}, "outer.rate: expected float, got True"),
    ({"names": ["a", 2]}, "outer.names[1]: expected str, got 2"),
    # no infinite or NaN number passes (an infinite rate trained NaN weights with exit status 0)
    ({"rate": float("inf")}, "outer.rate: must be a finite number, got inf"),
    ({"rate": float("-inf")}, "outer.rate: must be a finite number, got -inf"),
    ({"rate": float("nan")}, "outer.rate: must be a finite number, got nan"),
    ({"rate": 10**400}, "outer.rate: must be a finite number, got 100000000000000000...0000000000000000000"),
])
def test_errors_are_one_line_and_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        from_dict(Outer, data, "outer")
    assert str(info.value) == message


def test_bounds_and_names() -> None:
    require_at_most(MAX_WIDTH, MAX_WIDTH, "w")
    with pytest.raises(ConfigError, match=r"^w: must be <= 16,384"):
        require_at_most(MAX_WIDTH + 1, MAX_WIDTH, "w")
    require_name("M1-200", "models.M1-200")
    with pytest.raises(ConfigError, match=r"^models\.\.\.: '\.\.' is not a name"):
        require_name("..", "models...")
    assert (child_key("", "a"), child_key("x.y", "a")) == ("a", "x.y.a")


@dataclass(frozen=True)
class Named:
    table: dict[str, int] = field(default_factory=dict)


def test_an_int_key_and_its_string_are_one_name_given_twice() -> None:
    """YAML's `1:` and `'1':` are two keys; as names they are one, and merging them lost a model silently."""
    with pytest.raises(ConfigError) as info:
        from_dict(Named, {"table": {1: 1, "1": 2}}, "named")
    assert str(info.value).startswith("named.table.1: the name '1' is given twice")
    assert from_dict(Named, {"table": {1: 1, "2": 2}}).table == {"1": 1, "2": 2}


def test_the_memory_budget_is_the_lowest_limit(monkeypatch) -> None:
    import resource

    from sumpipe import validation

    monkeypatch.setattr(validation, "physical_memory_bytes", lambda: 64 << 30)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (4 << 30, resource.RLIM_INFINITY))
    assert validation.memory_budget_bytes() <= 4 << 30
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert 0 < validation.memory_budget_bytes() <= 64 << 30
