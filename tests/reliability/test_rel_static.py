"""Static guard: src/ must not gain calls that run code from data or a shell.

Flagged (by reading the syntax tree, so comments and strings never count):
- `torch.load(...)` without `weights_only=True`;
- `pickle.load/loads`, `pickle.Unpickler`, `pandas.read_pickle`, `numpy.load(..., allow_pickle=True)`;
- the builtins `eval(...)` and `exec(...)` (a method such as `model.eval()` is fine);
- `yaml.load/load_all(...)` unless `Loader=` is yaml's SafeLoader/CSafeLoader/BaseLoader or a class of the
  same module derived from them; `yaml.unsafe_load`, `yaml.full_load`;
- any call with `shell=True`.

The self-test table keeps the checker honest: every BAD snippet must be flagged, every GOOD one not.
"""

from __future__ import annotations

import ast

import pytest

from tests.reliability.harness import SRC

SAFE_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _safe_loader_classes(tree: ast.Module) -> set[str]:
    """Classes of this module that derive from a safe yaml loader."""
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(_dotted(b).rsplit(".", 1)[-1] in SAFE_LOADERS for b in node.bases)}


def findings(source: str, filename: str = "<snippet>") -> list[str]:
    tree = ast.parse(source, filename)
    safe = SAFE_LOADERS | _safe_loader_classes(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        where = f"{filename}:{node.lineno}"
        if name == "torch.load" and not _is_true(_keyword(node, "weights_only")):
            found.append(f"{where}: torch.load without weights_only=True")
        if name in ("pickle.load", "pickle.loads", "pickle.Unpickler", "pd.read_pickle", "pandas.read_pickle",
                    "dill.load", "dill.loads", "marshal.loads", "shelve.open"):
            found.append(f"{where}: {name}")
        if name in ("np.load", "numpy.load") and _is_true(_keyword(node, "allow_pickle")):
            found.append(f"{where}: {name}(allow_pickle=True)")
        if isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec"):
            found.append(f"{where}: {node.func.id}(")
        if name in ("yaml.unsafe_load", "yaml.full_load", "yaml.unsafe_load_all", "yaml.full_load_all"):
            found.append(f"{where}: {name}")
        if name in ("yaml.load", "yaml.load_all"):
            loader = _keyword(node, "Loader") or (node.args[1] if len(node.args) > 1 else None)
            if loader is None or _dotted(loader).rsplit(".", 1)[-1] not in safe:
                found.append(f"{where}: {name} without a safe Loader")
        if _is_true(_keyword(node, "shell")):
            found.append(f"{where}: shell=True")
    return found


BAD = {
    "torch.load without weights_only": "import torch\ntorch.load('x.pt')\n",
    "torch.load weights_only=False": "import torch\ntorch.load('x.pt', weights_only=False)\n",
    "pickle.load": "import pickle\npickle.load(open('x', 'rb'))\n",
    "pickle.loads": "import pickle\npickle.loads(b'')\n",
    "pandas.read_pickle": "import pandas as pd\npd.read_pickle('x')\n",
    "numpy allow_pickle": "import numpy as np\nnp.load('x.npy', allow_pickle=True)\n",
    "eval(": "eval('1 + 1')\n",
    "exec(": "exec('x = 1')\n",
    "yaml.load without Loader": "import yaml\nyaml.load('a: 1')\n",
    "yaml.load with FullLoader": "import yaml\nyaml.load('a: 1', Loader=yaml.FullLoader)\n",
    "yaml.load with an unsafe subclass": ("import yaml\nclass L(yaml.UnsafeLoader): pass\n"
                                          "yaml.load('a: 1', Loader=L)\n"),
    "yaml.unsafe_load": "import yaml\nyaml.unsafe_load('a: 1')\n",
    "subprocess shell=True": "import subprocess\nsubprocess.run('ls', shell=True)\n",
}
GOOD = {
    "torch.load weights_only=True": "import torch\ntorch.load('x.pt', weights_only=True)\n",
    "model.eval()": "model.eval()\n",
    "yaml.safe_load": "import yaml\nyaml.safe_load('a: 1')\n",
    "yaml.load SafeLoader": "import yaml\nyaml.load('a: 1', Loader=yaml.SafeLoader)\n",
    "yaml.load safe subclass": "import yaml\nclass L(yaml.SafeLoader): pass\nyaml.load('a: 1', Loader=L)\n",
    "words in a string": "text = 'never eval( or pickle.load or shell=True'\n",
    "subprocess list": "import subprocess\nsubprocess.run(['ls'], shell=False)\n",
}


@pytest.mark.parametrize("snippet", [pytest.param(v, id=k) for k, v in BAD.items()])
def test_checker_flags(snippet: str) -> None:
    assert findings(snippet)


@pytest.mark.parametrize("snippet", [pytest.param(v, id=k) for k, v in GOOD.items()])
def test_checker_passes(snippet: str) -> None:
    assert findings(snippet) == []


def test_src_has_no_unsafe_calls() -> None:
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 30
    found = [f for path in files for f in findings(path.read_text(encoding="utf-8"), str(path.relative_to(SRC)))]
    assert found == []
