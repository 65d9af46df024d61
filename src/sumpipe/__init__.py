"""sumpipe: a reproducible text-summarization research pipeline, and its Python API (docs/api.md).

    import sumpipe
    s = sumpipe.load("M2")                                # a trained model (name or folder)
    print(s.summarize("Return a new sorted list from the items in iterable."))
    sumpipe.load_extractive("textrank").summarize(text, sentences=2)
    sumpipe.rouge(predictions, references).scores["rouge1"].fmeasure

The names below are imported on first use (PEP 562), so `import sumpipe` loads nothing else: no
torch, no pandas; torch loads when a model's weights do. The API is the commands' own code
(`sumpipe.decode.summarizer`, `sumpipe.decode.extractive`, `sumpipe.evaluate.score_files`).
`load_extractive` is not called `extractive`: that is the subpackage of the methods, which Python
would bind over a function of the same name as soon as it is imported.
"""

__version__ = "0.1.0"
# typing.TYPE_CHECKING without importing typing (two thirds of this import's time); no importlib and
# no `from __future__` either: `import sumpipe` loads no module but itself (tests/test_public_api.py)
TYPE_CHECKING = False

# public name -> the module that defines it
_EXPORTS = {
    "load": "sumpipe.decode.summarizer",
    "Summarizer": "sumpipe.decode.summarizer",
    "Summary": "sumpipe.decode.summarizer",
    "load_extractive": "sumpipe.decode.extractive",
    "ExtractiveSummarizer": "sumpipe.decode.extractive",
    "rouge": "sumpipe.evaluate.score_files",
    "RougeResult": "sumpipe.evaluate.score_files",
    "RougeScore": "sumpipe.evaluate.score_files",
    "SumpipeError": "sumpipe.errors",
    "ConfigError": "sumpipe.errors",
}
__all__ = ["ConfigError", "ExtractiveSummarizer", "RougeResult", "RougeScore", "Summarizer", "Summary", "SumpipeError",
           "load", "load_extractive", "rouge"]  # = _EXPORTS (tests/test_public_api.py)

if TYPE_CHECKING:  # the same names for type checkers and editors
    from typing import Any

    from sumpipe.decode.extractive import ExtractiveSummarizer, load_extractive
    from sumpipe.decode.summarizer import Summarizer, Summary, load
    from sumpipe.errors import ConfigError, SumpipeError
    from sumpipe.evaluate.score_files import RougeResult, RougeScore, rouge


def __getattr__(name: str) -> "Any":
    if name not in _EXPORTS:
        raise AttributeError(f"module 'sumpipe' has no attribute {name!r}")
    value = getattr(__import__(_EXPORTS[name], fromlist=[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
