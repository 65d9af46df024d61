"""The public API of `sumpipe/__init__.py`: what `import sumpipe` loads (nothing, no torch), its names,
and docs/api.md's examples, every `>>>` line run as a doctest in a folder holding a tiny model M2."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import sumpipe


def _run(code: str, cwd: Path | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_import_sumpipe_loads_no_other_module() -> None:
    code = ("import sys; before = set(sys.modules); import sumpipe; "
            "print(sorted(m for m in set(sys.modules) - before if m != 'sumpipe'))")
    assert _run(code) == "[]"                                   # no torch, no typing, no sumpipe submodule


def test_every_exported_name_resolves_and_is_listed() -> None:
    from sumpipe import _EXPORTS

    assert sorted(sumpipe.__all__) == sorted(_EXPORTS)
    for name in sumpipe.__all__:
        assert getattr(sumpipe, name).__name__ == name
        assert name in dir(sumpipe)
    assert sumpipe.load.__module__ == "sumpipe.decode.summarizer"          # the command's own code
    assert sumpipe.load_extractive.__module__ == "sumpipe.decode.extractive"
    with pytest.raises(AttributeError, match="has no attribute 'lod'"):
        sumpipe.lod  # noqa: B018


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, make_model_dir) -> Path:
    """A folder as `dvc repro` leaves it, for the examples: models/M2, a tiny transformer on first40."""
    from sumpipe.config import Budget

    root = tmp_path_factory.mktemp("project")
    make_model_dir(root / "models" / "M2", selection=Budget("first", 40), seed=1)
    return root


def test_loading_a_model_imports_torch_only_when_it_summarises(project: Path) -> None:
    code = ("import sys, sumpipe; s = sumpipe.load('M2'); print('torch' in sys.modules, end=' '); "
            "s.summarize('The cat sat on the mat.'); print('torch' in sys.modules)")
    assert _run(code, cwd=project) == "False True"


def api_examples(repo_root: Path) -> str:
    """docs/api.md's python code blocks, as one doctest text (markdown-it finds the fences)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt().parse((repo_root / "docs" / "api.md").read_text(encoding="utf-8"))
    return "\n".join(t.content for t in tokens if t.type == "fence" and t.info.strip() == "python")


def test_the_examples_of_docs_api_md_run(project: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = api_examples(repo_root)
    assert text.count(">>> ") >= 20                          # every section's examples were found
    monkeypatch.chdir(project)
    test = doctest.DocTestParser().get_doctest(text, {}, "docs/api.md", str(repo_root / "docs" / "api.md"), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0 and runner.tries >= 20, "".join(report)


ARTICLE = ("Police said the man was arrested on Monday after a long chase through the city. "
           "A bird flew over the house. The dog ate the bone, and the cat sat on the mat.")


def test_the_api_and_the_command_give_the_same_summary(project: Path, cli) -> None:
    import json

    article = ARTICLE
    (project / "article.txt").write_text(article, encoding="utf-8")
    done = cli("decode", "--json", "--beam", "2", "-m", "M2", "article.txt", cwd=project)
    record = json.loads(done.stdout)
    summary = sumpipe.load("M2", project=project).summarize(article, beam=2)
    assert (record["summary"], record["tokens"], record["score"]) == (summary.text, summary.tokens,
                                                                      round(summary.score, 4))


@pytest.mark.parametrize(("call", "message"), [
    (lambda s: s.summarize(b"The cat sat."), "texts: expected a string or a list of strings, got bytes"),
    (lambda s: s.summarize(Path("article.txt")), "texts: expected a string or a list of strings, got a path"),
    (lambda s: s.summarize(None), "texts: expected a string or a list of strings, got None"),
    (lambda s: s.summarize("The cat\0 sat on the mat."), "texts: holds a NUL byte (character 7): binary data"),
    (lambda s: s.summarize(["The cat sat.", 3]), "texts[1]: expected a string, got int 3"),
    (lambda s: s.summarize("The cat sat.", threads="2"), "threads: expected an int, got str '2'"),
    (lambda s: s.summarize("The cat sat.", details="yes"), "details: expected True or False, got str 'yes'"),
    (lambda s: s.summarize(["Привет", "мир"]), "none of the 2 documents has Latin-script text to summarise"),
    (lambda s: s.summarize([]), "no text to summarise (no document was given)"),
    (lambda s: sumpipe.load(b"M2"), "model: expected a folder or file name (str or Path), got bytes"),
    (lambda s: sumpipe.load("M2", seed="1"), "seed: expected an int, got str '1'"),
    (lambda s: sumpipe.load("M2", seeds=5), "seeds: expected a list of seeds (ints), got int 5"),
    (lambda s: sumpipe.load("M2", project=5), "project: expected a folder or file name (str or Path), got int 5"),
    (lambda s: sumpipe.load("M2", device="tpu"), "device: must be one of 'auto', 'cpu', 'cuda', got str 'tpu'"),
    (lambda s: sumpipe.load_extractive(None), "method: expected a string, got None"),
    (lambda s: sumpipe.load_extractive("lead").summarize(b"x"), "texts: expected a string or a list of strings"),
    (lambda s: sumpipe.load_extractive("lead").summarize("The cat sat.", sentences="2"),
     "sentences: expected an int, got str '2'"),
    (lambda s: sumpipe.load_extractive("lead").summarize("A cat\0. A dog."), "texts: holds a NUL byte"),
    (lambda s: sumpipe.rouge(None, None), "predictions: expected a string or a list of strings, got None"),
    (lambda s: sumpipe.rouge(["a"], [[1]]), "references[0][0]: expected a string, got int 1"),
    (lambda s: sumpipe.rouge("a\0b", "a b"), "predictions: holds a NUL byte"),
    (lambda s: sumpipe.rouge("a", "a", bootstrap=-1), "bootstrap: must be >= 1, got -1"),
    (lambda s: sumpipe.rouge("a", "a", confidence=2), "confidence: must be in (0, 1), got 2"),
    (lambda s: sumpipe.rouge("a", "a", seed="s"), "seed: expected an int, got str 's'"),
])
def test_every_public_function_refuses_a_wrong_type_in_one_sumpipe_error(
        project: Path, monkeypatch: pytest.MonkeyPatch, call, message: str) -> None:
    """docs/api.md: every error is one SumpipeError. `summarize(b"...")` was "TypeError: object of type 'int'
    has no len()", `summarize(Path(...))` "'PosixPath' object is not iterable", `rouge(bootstrap=-1)` numpy's
    "negative dimensions"; a NUL byte was summarised though the command refuses such a file."""
    monkeypatch.chdir(project)
    with pytest.raises(sumpipe.SumpipeError) as refused:
        call(sumpipe.load("M2"))
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
