"""Typed, frozen dataclasses validated from plain mappings: the generic half of params.yaml's checks.

`from_dict(cls, mapping, key)` builds dataclass `cls`, driven by its annotations: a wrong type, an
unknown key or a value out of range raises `ConfigError` with a one-line message that names the
dotted key, e.g.

    vocab.size: expected int, got 'big'

Supported annotations: bool, int, float (ints accepted), str, `X | None`, `Literal[...]`,
`list[X]`, `dict[str, X]` and nested dataclasses. Range checks live in each class's `check(key)`,
written with `require`, `require_at_most` (the MAX_* upper bounds below), `require_fits_in_memory`
and `require_name`. Used by `sumpipe.config` (params.yaml's sections), the model families' arch types
and the model card; it knows nothing of sumpipe but its error type.
"""

from __future__ import annotations

import dataclasses
import math
import re
import reprlib
import types
import typing
from typing import Any, Literal

from sumpipe.errors import ConfigError


def _type_name(tp: Any) -> str:
    if tp is type(None):
        return "null"
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _shown(value: Any) -> str:
    """A bounded repr for error messages: a YAML alias bomb (a few lines that expand to a billion
    items) must not be expanded into the message."""
    return _SHORT_REPR.repr(value)


_SHORT_REPR = reprlib.Repr()  # keyword arguments need Python 3.12
_SHORT_REPR.maxlevel, _SHORT_REPR.maxlist, _SHORT_REPR.maxdict = 2, 4, 4
_SHORT_REPR.maxstring = _SHORT_REPR.maxother = 60


def _convert(value: Any, tp: Any, key: str) -> Any:
    """Check `value` against annotation `tp`; return it converted (dicts become dataclasses)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _convert(value, arg, key)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{key}: expected {_type_name(tp)}, got {_shown(value)}")
    if origin is Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise ConfigError(f"{key}: expected one of {choices}, got {_shown(value)}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list, got {_shown(value)}")
        return [_convert(v, args[0], f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping, got {_shown(value)}")
        out = {}
        for k, v in value.items():
            if str(k) in out:  # YAML's `1:` and `'1':` are two keys that read as one name
                raise ConfigError(f"{key}.{k}: the name {_shown(str(k))} is given twice (YAML reads `1:` and "
                                  "`'1':` as two keys, sumpipe as one name)")
            out[str(k)] = _convert(v, args[1], f"{key}.{k}")
        return out
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_dict(tp, value, key)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {_shown(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected int, got {_shown(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected float, got {_shown(value)}")
        require_finite(value, key)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected str, got {_shown(value)}")
        return value
    raise TypeError(f"unsupported annotation {tp!r} for {key}")  # a programming error, not a user one


def from_dict(cls: type, data: Any, key: str = "", base: Any = None) -> Any:
    """Build dataclass `cls` from a mapping, rejecting unknown keys and checking every type.

    A key the mapping leaves out takes its value from `base` (an instance of `cls`) when given, else
    the field's default. A nested section overrides *its* default key by key: the field's default
    instance, not the class's (a partial `pretrain.train:` keeps pretrain's own defaults for the rest).
    """
    where = f"{key}: " if key else ""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}expected a mapping, got {_shown(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(map(str, data)) - set(fields))
    if unknown:
        prefix = f"{key}." if key else ""
        raise ConfigError(f"{prefix}{unknown[0]}: unknown key (known: {', '.join(sorted(fields))})")
    kwargs = {}
    for name, f in fields.items():
        sub = child_key(key, name)
        if name in data and dataclasses.is_dataclass(hints[name]):
            kwargs[name] = from_dict(hints[name], data[name], sub, _default_instance(f, hints[name], base))
        elif name in data:
            kwargs[name] = _convert(data[name], hints[name], sub)
        elif base is not None:
            kwargs[name] = getattr(base, name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{sub}: required key is missing")
    obj = cls(**kwargs)
    check = getattr(obj, "check", None)
    if check is not None:
        check(key)
    return obj


def _default_instance(f: dataclasses.Field, tp: type, base: Any) -> Any:
    """What a nested section given as a mapping overrides: `base`'s value, else the field's default."""
    if base is not None:
        value = getattr(base, f.name)
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        value = None if f.default is dataclasses.MISSING else f.default
    return value if isinstance(value, tp) else None


def require(condition: bool, key: str, message: str) -> None:
    """Raise a one-line ConfigError naming `key` unless `condition` holds."""
    if not condition:
        raise ConfigError(f"{key}: {message}")


def require_finite(value: float, key: str) -> None:
    """Refuse NaN and +-infinity (YAML's `.nan`, `.inf`; "inf" on the command line), and an int too
    large for a float: every number of params.yaml and of a command's float options is finite, so no
    stage trains on an infinite rate or decodes with an infinite penalty."""
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond float's range
        finite = False
    require(finite, key, f"must be a finite number, got {_shown(value)}")


def child_key(prefix: str, name: str) -> str:
    """The dotted key of field `name` under `prefix` ("" at the top level)."""
    return f"{prefix}.{name}" if prefix else name


# --------------------------------------------------------------------------------------------
# Upper bounds: a size past them is a typo, refused before anything is allocated
# --------------------------------------------------------------------------------------------
MAX_WIDTH = 16384            # d_model, embedding and hidden widths (BERT-large: 1024; GPT-3: 12288)
MAX_FF_WIDTH = 65536         # feed-forward width
MAX_LAYERS = 256
MAX_HEADS = 256
MAX_VOCAB = 2_000_000        # vocabulary entries (word or piece)
MAX_POSITIONS = 65536        # tokens per sequence (source, summary, encoder positions, decode length)
MAX_BATCH = 65536            # examples per batch, beams
MAX_WORKERS = 1024           # processes and threads
MAX_BOOTSTRAP = 100_000      # 1,000 resamples take ~0.3 s: 100,000 are ~30 s per system
MAX_COUNT = 10**9            # steps, examples, sizes of generated data
BYTES_PER_PARAMETER = 16     # float32 weights + gradients + two Adam moments


def require_at_most(value: float | None, limit: float, key: str) -> None:
    """A one-line ConfigError unless `value` (None: unset) is at most `limit`, a sane upper bound."""
    require(value is None or value <= limit, key, f"must be <= {limit:,} (a larger value cannot be meant)")


def physical_memory_bytes() -> int:
    """This machine's RAM (0 where the OS does not say)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 0


def memory_budget_bytes() -> int:
    """The memory this process may use: the machine's RAM, or less where an address-space limit
    (`ulimit -v`, RLIMIT_AS) or the cgroup's memory.max says so (0 where nothing says)."""
    budget = [physical_memory_bytes()]
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            budget.append(soft)
    except (ImportError, OSError, ValueError):  # no RLIMIT_AS on this system
        pass
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            text = f.read().strip()
        if text.isdigit():
            budget.append(int(text))
    except OSError:
        pass
    known = [b for b in budget if b > 0]
    return min(known) if known else 0


def require_fits_in_memory(parameters: int, key: str) -> None:
    """Refuse an architecture whose training state alone (`parameters` x 16 bytes) exceeds RAM: better
    now, in one line, than an allocator traceback after the data is loaded."""
    need, have = parameters * BYTES_PER_PARAMETER, physical_memory_bytes()
    require(not have or need <= have, key,
            f"the model has ~{parameters:,} parameters: ~{need / 2**30:,.0f} GiB to train, "
            f"more than this machine's {have / 2**30:,.0f} GiB")


NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]+")


def require_name(name: str, key: str) -> None:
    """Model and system names become folder names under an output path: a name, never a path."""
    require(bool(NAME_PATTERN.fullmatch(name)) and name not in (".", ".."), key,
            f"{name!r} is not a name (letters, digits, '.', '_', '-'; not '.' or '..')")
