"""The test tree mirrors src/: a module's tests are found by its name, and helpers come through fixtures.

- `tests/a/b/test_c.py` tests `src/sumpipe/a/b/c.py`, or the package `src/sumpipe/a/b/c/__init__.py`;
  `tests/test_c.py` tests `src/sumpipe/c.py`. Exempt: tests/reliability/ (a cross-cutting fault suite) and
  the top-level CROSS_CUTTING files, which test the whole pipeline rather than one module.
- `tests/bench/test_c.py` tests the script `bench/c.py` (the benchmarks that a later session runs on a device),
  and `tests/ci/test_c.py` the script `.ci/c.py` (CI's and the commit hooks' checks),
  `tests/experiments/<e>/test_c.py` the script `experiments/<e>/c.py` of the experiment folder `<e>`
  (a study's script). The commands those folders' pipelines run live in `src/sumpipe/studies/`, tested as any
  module is (`tests/studies/test_c.py`); no src package is named `experiments`, so the name means the folder.
- Every test folder is a package (`__init__.py`), so basenames may repeat (`selection/test_stage.py`,
  `train/test_stage.py`).
- No test file imports another test module or a conftest: shared helpers are fixtures (conftest.py), or
  plain modules imported by package path (`tests.reliability.harness`, `tests.train.tiny_task`).

`python tests/test_layout.py` lists the src modules that have no test file of their own (a report, not a
rule: some are covered through their callers).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import pytest

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "sumpipe"
EXPERIMENTS = TESTS.parent / "experiments"  # the experiment folders, whose scripts have tests of their own
CROSS_CUTTING = {"test_pipeline_e2e.py", "test_dvc_stages.py", "test_reproducible_stages.py", "test_layers.py",
                 "test_layout.py", "test_experiment_pipelines.py",
                 "test_params_file.py",   # params.yaml as `dvc exp run -S` rewrites it
                 "test_public_api.py",  # sumpipe/__init__.py's names and docs/api.md, across the packages
                 "test_readme_comparison.py",  # the README's comparison steps on a clone with a foreign lock
                 "test_interrupted_repro.py",  # Ctrl-C in `dvc repro`, then `dvc repro` again
                 "test_queued_experiments.py",  # two queued experiments side by side (`dvc queue start -j 2`)
                 "test_lookup_errors.py"}  # every registry's unknown-name error lists every valid name


def module_of(test_file: PurePosixPath) -> PurePosixPath:
    """`a/b/test_c.py` -> `a/b/c` (a path under src/sumpipe, without `.py`)."""
    return test_file.parent / test_file.name.removeprefix("test_").removesuffix(".py")


def stale_test_files(test_files: Iterable[PurePosixPath], src_files: set[PurePosixPath]) -> list[PurePosixPath]:
    """The test files (relative to tests/) that name no module among `src_files` (relative to src/sumpipe)."""
    stale = []
    for test_file in test_files:
        module = module_of(test_file)
        if module.name == "__init__" or (module.with_suffix(".py") not in src_files
                                         and module / "__init__.py" not in src_files):
            stale.append(test_file)  # a package's tests are named after the package, not `test___init__.py`
    return stale


def _relative(root: Path, paths: Iterable[Path]) -> list[PurePosixPath]:
    return sorted(PurePosixPath(p.relative_to(root).as_posix()) for p in paths)


def is_script_test(test_file: PurePosixPath) -> bool:
    """Whether `test_file` (relative to tests/) tests a script of an experiment folder: `experiments/<e>/...`."""
    parts = test_file.parts
    return len(parts) > 2 and parts[0] == "experiments" and (EXPERIMENTS / parts[1]).is_dir()


def per_module_test_files() -> list[PurePosixPath]:
    files = _relative(TESTS, TESTS.rglob("test_*.py"))
    return [f for f in files if f.parts[0] not in ("reliability", "bench", "ci") and str(f) not in CROSS_CUTTING
            and not is_script_test(f)]


def src_files() -> set[PurePosixPath]:
    return set(_relative(SRC, SRC.rglob("*.py")))


def _docstring_only(path: Path) -> bool:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return len(body) <= 1 and all(isinstance(node, ast.Expr) for node in body)


def untested_modules() -> list[PurePosixPath]:
    """The src modules no test file is named after (packages whose `__init__.py` is a docstring left out)."""
    tested = {module_of(f) for f in per_module_test_files()}
    modules = [f.parent if f.name == "__init__.py" else f.with_suffix("") for f in sorted(src_files())
               if not (f.name == "__init__.py" and _docstring_only(SRC / f))]
    return [m for m in modules if m not in tested and str(m) != "."]


def test_every_test_file_names_a_src_module() -> None:
    assert per_module_test_files(), "no test files found"
    assert stale_test_files(per_module_test_files(), src_files()) == []


FAKE_SRC = {PurePosixPath(p) for p in ("cli.py", "config.py", "selection/methods.py",
                                       "extractive/methods/__init__.py",
                                       "extractive/methods/lsa.py")}


@pytest.mark.parametrize(("test_file", "stale"), [
    ("test_config.py", False),                       # a top-level module
    ("test_cli.py", False),
    ("selection/test_methods.py", False),             # a module of a package
    ("extractive/methods/test_lsa.py", False),        # nested packages nest
    ("extractive/test_methods.py", False),            # a package: its __init__.py
    ("extractive/methods/test_lsaa.py", True),        # a typo
    ("test_extract_methods.py", True),                # the old flat name
    ("selection/test_lsa.py", True),                  # a module of another package
    ("extractive/methods/test___init__.py", True),    # a package is tested by its own name
    ("decode/test_cli.py", True),                     # a folder that is no package of src
])
def test_a_stale_name_is_caught(test_file: str, stale: bool) -> None:
    path = PurePosixPath(test_file)
    assert stale_test_files([path], FAKE_SRC) == ([path] if stale else [])


def test_every_bench_test_names_a_bench_script() -> None:
    tests = sorted((TESTS / "bench").glob("test_*.py"))
    assert [t.name for t in tests if not (TESTS.parent / "bench" / t.name.removeprefix("test_")).is_file()] == []


def test_every_ci_test_names_a_ci_script() -> None:
    tests = sorted((TESTS / "ci").glob("test_*.py"))
    assert tests, "no CI script tests found"
    assert [t.name for t in tests if not (TESTS.parent / ".ci" / t.name.removeprefix("test_")).is_file()] == []


@pytest.mark.parametrize(("test_file", "script"), [
    ("experiments/cnn/test_name_runs.py", True),      # experiments/cnn/name_runs.py
    ("studies/test_decoding.py", False),               # src/sumpipe/studies/decoding.py
    ("experiments/test_decoding.py", False),           # no experiment folder: a src path, caught as stale
    ("experiments/nowhere/test_x.py", False),          # no such experiment folder: a src path, caught as stale
])
def test_an_experiment_script_test_is_told_from_a_module_test(test_file: str, script: bool) -> None:
    assert is_script_test(PurePosixPath(test_file)) is script


def test_no_src_package_is_named_after_the_experiments_folder() -> None:
    assert not (SRC / EXPERIMENTS.name).exists()


def test_every_experiment_script_test_names_a_script() -> None:
    tests = [f for f in _relative(TESTS, (TESTS / "experiments").rglob("test_*.py")) if is_script_test(f)]
    assert tests, "no experiment script tests found"
    assert [t for t in tests if not (TESTS.parent / module_of(t).with_suffix(".py")).is_file()] == []


def test_every_test_folder_is_a_package() -> None:
    folders = {p.parent for p in TESTS.rglob("test_*.py")}
    assert [f for f in sorted(folders) if not (f / "__init__.py").is_file()] == []


def imported_modules(source: str) -> list[str]:
    """Every module an `import` or `from ... import` statement of `source` names (relative imports as `.x`)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
    return names


def imports_a_test_module(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return last == "conftest" or last.startswith("test_")


@pytest.mark.parametrize(("source", "found"), [
    ("from conftest import transformer_card", ["conftest"]),
    ("from tests.conftest import cli", ["tests.conftest"]),
    ("from test_decode_api import make_model_dir", ["test_decode_api"]),
    ("def f():\n    from tests.train.test_stage import write_fixture", ["tests.train.test_stage"]),
    ("import tests.decode.test_api as api", ["tests.decode.test_api"]),
    ("from .test_api import DOCS", [".test_api"]),
    ("from tests.reliability.harness import check\nfrom sumpipe.cli import main\nimport pytest", []),
], ids=["conftest", "package conftest", "test module", "inside a function", "import as", "relative", "helpers"])
def test_an_import_of_a_test_module_is_caught(source: str, found: list[str]) -> None:
    assert [m for m in imported_modules(source) if imports_a_test_module(m)] == found


def test_no_test_file_imports_another_test_module_or_a_conftest() -> None:
    offenders = {str(PurePosixPath(p.relative_to(TESTS).as_posix())): bad for p in sorted(TESTS.rglob("*.py"))
                 if (bad := [m for m in imported_modules(p.read_text(encoding="utf-8")) if imports_a_test_module(m)])}
    assert offenders == {}


if __name__ == "__main__":
    missing = untested_modules()
    print(f"{len(missing)} of {len(src_files())} src modules have no test file of their own:")
    for module in missing:
        print(f"  src/sumpipe/{module}{'/__init__.py' if (SRC / module).is_dir() else '.py'}")
