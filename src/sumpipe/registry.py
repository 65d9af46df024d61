"""A registry: the named things of one kind (model families, selection methods), looked up by name.

Entries come from `register(name, entry)` calls in the modules that define them; `builtin` maps the
names that ship with sumpipe to those modules, imported on first use (so a family's torch or a
method's scikit-learn loads only when it is asked for). An unknown name is a one-line ConfigError
that names the params key and lists the known names.
"""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar

from sumpipe.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, builtin: dict[str, str]) -> None:
        self.kind = kind
        self.builtin = builtin
        self.entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> T:
        """Add `entry` under `name` (a second registration under the same name replaces the first)."""
        self.entries[name] = entry
        return entry

    def names(self) -> list[str]:
        return sorted(set(self.builtin) | set(self.entries))

    def get(self, name: str, key: str) -> T:
        """The entry `name`; an unknown one is a one-line ConfigError naming `key`."""
        if name not in self.entries and name in self.builtin:
            importlib.import_module(self.builtin[name])
        if name not in self.entries:
            raise ConfigError(f"{key}: unknown {self.kind} {name!r} (known: {', '.join(self.names())})")
        return self.entries[name]
