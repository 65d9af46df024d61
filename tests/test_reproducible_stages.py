"""Data stages are bit-identical on every machine: preprocess -> vocab -> extract on a generated corpus,
with the exact bytes (sha256) of every output pinned.

The corpus is generated from blake2b, so it is the same everywhere; it has a few hundred distinct word
counts and 3-gram counts, enough that a rarity or 3-gram score computed with numpy's SIMD logarithms
differs in the last bit between a CPU with AVX-512 and one without (seen with the former code; see the
docs/reproducibility.md, "What is bit-identical across machines"). Two pins:

- `CONTENT`: the decoded values (json of every column; floats written exactly by `repr`): the same
  with any pyarrow;
- `FILES`: the Parquet/JSON bytes, which also depend on the Parquet writer (its version is written in
  the file): checked with the pyarrow pinned in constraints.txt.

When a deliberate change alters an output, update the pin and say why in the commit.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sumpipe.config import (
    Budget,
    ExtractConfig,
    ExtractiveConfig,
    PathsConfig,
    PreprocessConfig,
    SubwordConfig,
    VocabConfig,
)
from sumpipe.selection.stage import extract
from sumpipe.text.preprocess import preprocess
from sumpipe.vocab.build import build_vocab

REPO = Path(__file__).resolve().parents[1]

SYLLABLES = "ka lo mi ne ru ta vo si pe du ga ri".split()
CONTENT_WORDS = [a + b + c for a, b, c in itertools.product(SYLLABLES, repeat=3)][:700]
STOP_WORDS = "the of and a to in is was for on".split()
PHRASES = [" ".join(CONTENT_WORDS[7 * i: 7 * i + 3]) for i in range(90)]  # recurring 3-grams


def _numbers(seed: str):
    """An endless stream of floats in [0, 1), the same on every machine and Python version."""
    for i in itertools.count():
        digest = hashlib.blake2b(f"{seed}:{i}".encode(), digest_size=8).digest()
        yield int.from_bytes(digest, "big") / 2.0**64


def _sentence(u, length: int) -> str:
    words = []
    for _ in range(length):
        r = next(u)
        if r < 0.3:
            words.append(STOP_WORDS[int(next(u) * len(STOP_WORDS))])
        elif r < 0.45:
            words.append(PHRASES[int(len(PHRASES) * next(u) ** 2)])
        else:  # Zipf-like: low indices are frequent
            words.append(CONTENT_WORDS[int(len(CONTENT_WORDS) * next(u) ** 3)])
    return " ".join(words).capitalize() + "."


def _split(name: str, n_docs: int) -> pa.Table:
    u = _numbers(name)
    ids, sources, references = [], [], []
    for d in range(n_docs):
        n_sentences = 6 + int(next(u) * 30)
        sentences = [_sentence(u, 5 + int(next(u) * 14)) for _ in range(n_sentences)]
        ids.append(f"{name}-{d}")
        sources.append("\n".join(sentences))
        references.append(_sentence(u, 8 + int(next(u) * 8)))
    return pa.table({"id": ids, "source": sources, "reference": references})


def build(root: Path) -> Path:
    """raw (generated) -> processed -> vocab -> extracted under `root`, through the real stage functions."""
    raw = root / "raw"
    raw.mkdir()
    for name, n_docs in [("train", 160), ("valid", 20), ("test", 20)]:
        pq.write_table(_split(name, n_docs), raw / f"{name}.parquet")
    out = root / "out"
    preprocess(raw, out / "processed", PreprocessConfig(workers=1), out / "metrics" / "preprocess.json")
    build_vocab(out / "processed", out / "vocab", VocabConfig(), progress=False)
    extract(out / "processed", out / "vocab", out / "extracted", ExtractConfig(workers=1),
            out / "metrics" / "coverage.json", progress=False)
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _content(path: Path) -> str:
    if path.suffix == ".json":
        return _sha(path.read_bytes())
    table = pq.read_table(path)
    return _sha(json.dumps(table.to_pydict(), sort_keys=True).encode())


# sha256 (first 16 hex digits) of every output. Computed with the pinned packages on x86-64 CPUs with and
# without AVX-512 (numpy SIMD paths X86_V3 and X86_V4): the same bytes.
CONTENT = {
    "extracted/first200/test.parquet": "b6a1d1833cb93146",
    "extracted/first200/train.parquet": "bf4336d35bdcc995",
    "extracted/first200/valid.parquet": "d1680bbbd49f1baf",
    "extracted/first400/test.parquet": "744d35d208cddcdc",
    "extracted/first400/train.parquet": "94548e28d2598ceb",
    "extracted/first400/valid.parquet": "2606bf0279fb64b3",
    "extracted/ngram200/test.parquet": "21f4b9b16fd0d88f",
    "extracted/ngram200/train.parquet": "2aa0679c8fad89d7",
    "extracted/ngram200/valid.parquet": "ad64203f43d73fdd",
    "extracted/ngram400/test.parquet": "77e47149b0da71de",
    "extracted/ngram400/train.parquet": "cc1bc9e8017c724e",
    "extracted/ngram400/valid.parquet": "169735f075ae48f2",
    "metrics/coverage.json": "581be855e2370a42",  # + the `binds` share (extractive family), `differs`
    "metrics/preprocess.json": "58105c52b9835143",
    "processed/test.parquet": "a984935f12266754",
    "processed/train.parquet": "6ae864c41b335b61",
    "processed/valid.parquet": "8beefe65290c2fe7",
    "vocab/ngrams.parquet": "11705e420d4cb3e7",
    "vocab/vocab.parquet": "60ef4b4fbd36a959",
    "vocab/words.parquet": "7fc54a44fdca4ea1",
}
FILES = {
    "extracted/first200/test.parquet": "5e9cf81a724134cf",
    "extracted/first200/train.parquet": "f0e67d7a615b4b1f",
    "extracted/first200/valid.parquet": "de1572a344414ca6",
    "extracted/first400/test.parquet": "bc34e138aae5cbbe",
    "extracted/first400/train.parquet": "965ab8ad32072ba0",
    "extracted/first400/valid.parquet": "694e35c7f0aaecd1",
    "extracted/ngram200/test.parquet": "9b0aaa8237592747",
    "extracted/ngram200/train.parquet": "4bce35fee3fe5661",
    "extracted/ngram200/valid.parquet": "ffee8c7731644839",
    "extracted/ngram400/test.parquet": "bcea0417e72e044c",
    "extracted/ngram400/train.parquet": "4e25cfd0f4b4edad",
    "extracted/ngram400/valid.parquet": "d6c55013dfdba33a",
    "metrics/coverage.json": "581be855e2370a42",  # + the `binds` share (extractive family), `differs`
    "metrics/preprocess.json": "58105c52b9835143",
    "processed/test.parquet": "4869a5eba3e44938",
    "processed/train.parquet": "bcbf10c4862e4323",
    "processed/valid.parquet": "c1a21c83b3e29e2e",
    "vocab/ngrams.parquet": "5e02b677af729a39",
    "vocab/vocab.parquet": "de5342cb1dfcbfd8",
    "vocab/words.parquet": "002c0e726a702037",
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, Path]:
    out = build(tmp_path_factory.mktemp("reproducible"))
    return {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*")) if p.is_file()}


def test_output_values_are_pinned(outputs):
    assert {name: _content(p) for name, p in outputs.items()} == CONTENT


def _pinned(package: str) -> str:
    match = re.search(rf"^{package}==(\S+)$", (REPO / "constraints.txt").read_text(), re.M)
    assert match, f"constraints.txt pins no {package}"
    return match.group(1)


def test_output_bytes_are_pinned(outputs):
    if pa.__version__ != _pinned("pyarrow"):
        pytest.skip(f"the file bytes are pinned for pyarrow=={_pinned('pyarrow')} (constraints.txt), "
                    f"not {pa.__version__}; test_output_values_are_pinned still checks every value")
    assert {name: _sha(p.read_bytes()) for name, p in outputs.items()} == FILES


# --- the same bytes under every SIMD kernel -------------------------------------------------------------
# Every stage before training, run in a subprocess under each kernel setting this machine can emulate:
# numpy's own SIMD dispatch (NPY_DISABLE_CPU_FEATURES: without AVX-512, without AVX2), OpenBLAS's kernels
# (OPENBLAS_CORETYPE, numpy's and scipy's), torch's (ATEN_CPU_CAPABILITY) and the thread counts.
NO_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
KERNELS = {
    "native": {},
    "avx2-1thread": {"NPY_DISABLE_CPU_FEATURES": NO_AVX512, "OPENBLAS_CORETYPE": "Haswell",
                     "ATEN_CPU_CAPABILITY": "avx2", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    "sse-2threads": {"NPY_DISABLE_CPU_FEATURES": "X86_V3 " + NO_AVX512, "OPENBLAS_CORETYPE": "Prescott",
                     "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"},
}
EXTRACT_BUDGETS = [Budget("first", 40), Budget("ngram", 40, 1), Budget("ngram", 20, 1)] + [
    Budget(m, 40) for m in ("lead", "wordfreq", "tfidf", "lsa", "lsa_gongliu", "textrank", "lexrank",
                            "lexrank_continuous", "nmf", "luhn", "sumbasic", "klsum", "edmundson", "reduction")]
SYSTEMS = ["lead", "wordfreq", "tfidf", "lsa", "lsa_gongliu", "lsa_collection", "nmf", "textrank", "lexrank",
           "lexrank_continuous", "oracle", "ngram"]


def build_all(root: Path) -> Path:
    """Every stage before training on the generated corpus: preprocess, vocab, extract (every
    selectable method), subword, extractive-fit and the extractive systems."""
    from sumpipe.extractive.stage import fit_stage, system_stage
    from sumpipe.subword.stage import train_subword

    raw = root / "raw"
    raw.mkdir(parents=True)
    for name, n_docs in [("train", 160), ("valid", 20), ("test", 20)]:
        pq.write_table(_split(name, n_docs), raw / f"{name}.parquet")
    out = root / "out"
    paths = PathsConfig(**{k: str(out / k) for k in ("processed", "vocab", "extracted", "metrics", "extractive",
                                                     "subword", "predictions")}, timings=str(root / "timings"))
    preprocess(raw, paths.processed, PreprocessConfig(workers=1), out / "metrics" / "preprocess.json")
    build_vocab(paths.processed, paths.vocab, VocabConfig(), progress=False)
    extract(paths.processed, paths.vocab, paths.extracted, ExtractConfig(EXTRACT_BUDGETS, workers=1),
            out / "metrics" / "coverage.json", progress=False)
    train_subword(paths.processed, paths.subword, SubwordConfig(size=200))
    cfg = ExtractiveConfig(systems=SYSTEMS)
    fit_stage(paths, cfg)
    for name in SYSTEMS:
        system_stage(name, paths, cfg, "test")
    return out


def md5s(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): hashlib.md5(p.read_bytes()).hexdigest()[:12]
            for p in sorted(out.rglob("*")) if p.is_file()}


def _build_under(kernel: dict[str, str], root: Path) -> dict[str, str]:
    import os
    import subprocess
    import sys

    env = {**os.environ, **kernel, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, str(Path(__file__)), str(root)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.faults  # three builds in subprocesses: ~45 s on the shared 2-core machine
def test_every_stage_before_training_writes_the_same_bytes_under_every_kernel(tmp_path):
    """Before the fixed-order sums, `sse-2threads` changed extracted/{lexrank40,lsa40,nmf40,sumbasic40,wordfreq40},
    `avx2-1thread` extracted/lexrank40, and both extractive/{keywords,lsa_collection}.parquet and
    predictions/nmf (a kernel's sums and logarithms deciding a ranking, or stored)."""
    runs = {name: _build_under(kernel, tmp_path / name) for name, kernel in KERNELS.items()}
    native = runs.pop("native")
    assert len(native) == 77  # every output of every stage was compared
    for name, files in runs.items():
        assert [f for f in native if files.get(f) != native[f]] == [], name


if __name__ == "__main__":  # python tests/test_reproducible_stages.py ROOT: print the md5 of every output
    import sys

    print(json.dumps(md5s(build_all(Path(sys.argv[1])))))
