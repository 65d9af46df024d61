"""The import structure of src/sumpipe: no cycle between modules, and no layer importing a higher one.

`LAYERS` is the architecture written down once (docs/architecture.md points here): each entry is a
layer of top-level modules and packages, lowest first. A module may import its own package and any
lower layer, never a higher one nor another package of its own layer. Every import counts, the lazy
ones inside functions included (they run as surely, only later); `if TYPE_CHECKING:` imports count too
(a type a layer names is a dependency of that layer).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS: list[set[str]] = [
    {"errors", "names"},                                         # what every layer shares
    {"registry", "schemas", "device", "numerics", "options",    # small tools with no sumpipe state
     "validation", "arguments",
     "terminal"},
    {"inputs"},                                                  # user files read within bounds
    {"io"},                                                      # atomic writes, user files, checked Parquet reads
    {"timings", "config"},                                       # run figures; params.yaml, typed
    {"text", "data", "vocab", "subword"},                         # text and corpus stages
    {"extractive"},                                              # extractive methods and systems
    {"selection"},                                               # input selection (methods + Alg. 1)
    {"models"},                                                  # families, layers, model folders
    {"train"},
    {"decode"},
    {"evaluate"},
    {"report", "studies", "rewrite"},                        # artifacts -> report; own pipelines; studies
    {"docs"},                                                    # the docs' generated figures and lists
    {"cli"},                                                     # the `sumpipe` command
]
RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The sumpipe modules `path` imports (`from sumpipe.x import y` names `sumpipe.x.y` when that is a
    module, else `sumpipe.x`), resolved against the `known` module names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in known}


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in (SRC / "sumpipe").rglob("*.py")}
    known = set(files)
    return {name: imported_modules(path, known) - {name} for name, path in files.items()}


def unit_of(module: str) -> str:
    """`sumpipe.models.rnn` -> `models`; the top-level `sumpipe` package counts as the CLI."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "cli"


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a list of modules (first == last), or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for module, targets in sorted(graph.items()):
        here = unit_of(module)
        for target in sorted(targets):
            there = unit_of(target)
            if there != here and RANK[there] >= RANK[here]:
                out.append(f"{module} -> {target} ({here} must not import {there})")
    return out


def test_every_package_has_a_layer():
    units = {unit_of(m) for m in import_graph()}
    assert units - set(RANK) == set(), "add the new package to LAYERS"


def test_no_import_cycle():
    assert find_cycle(import_graph()) == []


def test_no_layer_imports_a_higher_one():
    assert layer_violations(import_graph()) == []


# --- the checks themselves can fail ----------------------------------------------------------
def test_find_cycle_reports_a_cycle_and_accepts_a_tree():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize(("importer", "imported", "allowed"), [
    ("sumpipe.models.rnn", "sumpipe.config", True),        # down
    ("sumpipe.models.rnn", "sumpipe.models.layers", True),  # own package
    ("sumpipe.config", "sumpipe.models.rnn", False),        # up
    ("sumpipe.text.clean", "sumpipe.vocab.words", False),   # sideways, same layer
])
def test_layer_rule(importer, imported, allowed):
    assert (layer_violations({importer: {imported}}) == []) is allowed


def test_from_import_resolves_to_the_module_it_names(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from sumpipe.models import rnn\nfrom sumpipe.io import write_json\n"
                      "def f():\n    import sumpipe.decode.batches\n", encoding="utf-8")
    known = {"sumpipe.models", "sumpipe.models.rnn", "sumpipe.io", "sumpipe.decode.batches"}
    assert imported_modules(source, known) == {"sumpipe.models", "sumpipe.models.rnn", "sumpipe.io",
                                               "sumpipe.decode.batches"}
