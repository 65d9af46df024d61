"""The extractive systems: every extractive method as a summarizer, evaluated like a trained model.

Two stages (dvc.yaml):

- `sumpipe extractive-fit` fits the corpus statistics the methods share (`CorpusStats`: idf and
  entropy weights, on the train split's sources) and the keyword table (Sokol 2022 §4.2: NMF topics of
  the references, `sumpipe.extractive.keywords`), under `paths.extractive`:
      corpus.parquet     term, idf, entropy (row "" holds the unseen-term idf and the document count)
      lsa_collection.parquet   term, entropy, loadings: Sokol 2022's collection-level LSA space
                         (`sumpipe.extractive.methods.lsa_collection`, read by `lsa_collection`)
      keywords.parquet   topic, rank, word, weight;  topics.parquet  split, id, topic (each reference's)
- `sumpipe extractive --system NAME` (a job of the predict stage, one per `extractive.systems`) writes
      predictions/<NAME>/<decode.split>.parquet   id, prediction, reference(, references),
                                                  selected (sentence indices)
                                                  (, reads_reference: the oracle)
  in the decode stage's format, so `evaluate`, the significance tests and the report treat it as
  any model. The budget is `extractive.sentences` sentences (and `extractive.tokens` tokens when set);
  sentences come out in document order. `oracle` reads the reference (an upper bound, labelled so).
  The run's wall time goes to `<timings>/extractive/<NAME>.json` (`sumpipe.timings`), outside the
  predictions, so a rerun leaves dvc.lock unchanged.
  `ngram` (Morozovskii 2022 Alg. 1) reads the vocab stage's 3-gram table, `<paths.vocab>/ngrams.parquet`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sumpipe.config import ExtractiveConfig, PathsConfig
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.names import SPLITS
from sumpipe.schemas import CORPUS_STATS, PROCESSED

if TYPE_CHECKING:
    from sumpipe.extractive.methods import CorpusStats

CORPUS_FILE = "corpus.parquet"


@dataclass
class SystemResult:
    path: Path
    documents: int
    binds: float       # share of documents with more sentences (or tokens) than the budget
    seconds: float


def check_systems(cfg: ExtractiveConfig) -> None:
    """Every `extractive.systems` / `options` name is a method (the registry's one-line error naming the
    key); every method's options are typed, in range, and build."""
    from sumpipe.extractive.methods import METHODS, build_method, checked_options

    # Types and ranges first: a typo fails before any method object is built.
    for name, options in cfg.options.items():
        method = METHODS.get(name, f"extractive.options.{name}")
        try:
            checked_options(method, options)
        except ConfigError as exc:
            raise ConfigError(f"extractive.options.{name}: extractive method {name!r}: bad option {exc}") from None
    for i, name in enumerate(cfg.systems):
        METHODS.get(name, f"extractive.systems[{i}]")
    for name, options in cfg.options.items():
        try:
            build_method(name, options)
        except SumpipeError as exc:
            raise ConfigError(f"extractive.options.{name}: {exc}") from None


def load_corpus(extractive_dir: str | Path) -> CorpusStats:
    """The `CorpusStats` written by `extractive-fit`."""
    from sumpipe.extractive.methods import CorpusStats
    from sumpipe.io.atomic import read_parquet

    path = Path(extractive_dir) / CORPUS_FILE
    if not path.is_file():
        raise SumpipeError(f"{path}: not found (run `sumpipe extractive-fit` first)")
    frame = read_parquet(path, contract=CORPUS_STATS)
    return CorpusStats.from_columns(frame["term"].tolist(), frame["idf"].tolist(), frame["entropy"].tolist())


def load_state(needs: str, paths: PathsConfig) -> Any:
    """The fitted state a method `needs` (`Method.needs`): "ngrams" -> the vocab stage's 3-gram table,
    "space" -> the collection LSA space of `extractive-fit`; None for ""."""
    if not needs:
        return None
    if needs == "ngrams":
        from sumpipe.vocab.ngrams import NGRAMS_FILE, NgramTable

        return NgramTable.load(Path(paths.vocab) / NGRAMS_FILE)
    from sumpipe.extractive.methods.lsa_collection import SPACE_FILE, LsaSpace
    from sumpipe.io.atomic import read_parquet

    path = Path(paths.extractive) / SPACE_FILE
    if not path.is_file():
        raise SumpipeError(f"{path}: not found (run `sumpipe extractive-fit` first)")
    frame = read_parquet(path)
    return LsaSpace.from_columns(frame["term"].tolist(), frame["entropy"].tolist(), frame["loadings"].tolist())


def fit_stage(paths: PathsConfig, cfg: ExtractiveConfig) -> dict[str, Any]:
    """Write corpus.parquet, keywords.parquet and topics.parquet (module docstring); return figures."""
    import pandas as pd

    from sumpipe.extractive.keywords import extract_keywords
    from sumpipe.extractive.methods import Analyzer, fit_corpus
    from sumpipe.extractive.methods.lsa_collection import SPACE_FILE, LsaSpace, term_stream
    from sumpipe.io.atomic import read_parquet, write_parquet

    out = Path(paths.extractive)
    train_path = Path(paths.processed) / "train.parquet"
    if not train_path.is_file():
        raise SumpipeError(f"{train_path}: not found (run `sumpipe preprocess` first)")
    train = read_parquet(train_path, contract=PROCESSED)
    analyzer = Analyzer()
    corpus = fit_corpus(analyzer.parse(s or "") for s in train["source"])
    write_parquet(pd.DataFrame(corpus.to_columns()), out / CORPUS_FILE)
    space = LsaSpace.fit([term_stream(analyzer.parse(s or "")) for s in train["source"]])  # documents, not kept
    write_parquet(pd.DataFrame(space.to_columns()), out / SPACE_FILE)

    references: dict[str, tuple[list[str], list[str]]] = {}
    for split in SPLITS:
        path = Path(paths.processed) / f"{split}.parquet"
        if path.is_file():
            frame = read_parquet(path, contract=PROCESSED)
            references[split] = (frame["id"].astype(str).tolist(), frame["reference"].fillna("").tolist())
    keywords, topics = extract_keywords(references, analyzer, cfg.keyword_topics, cfg.keyword_words)
    write_parquet(keywords, out / "keywords.parquet")
    write_parquet(topics, out / "topics.parquet")
    return {"terms": len(corpus.idf), "documents": corpus.documents, "topics": int(keywords["topic"].nunique()),
            "lsa_dimensions": space.dimensions}


def system_stage(name: str, paths: PathsConfig, cfg: ExtractiveConfig, split: str) -> SystemResult:
    """Write predictions/<name>/<split>.parquet for the extractive method `name` (module docstring)."""
    import pandas as pd

    from sumpipe.extractive.methods import METHODS, Analyzer, Limit, build_method
    from sumpipe.io.atomic import read_parquet, write_parquet
    from sumpipe.schemas import references_of

    check_systems(cfg)
    cls = METHODS.get(name, "extractive.systems")
    corpus = load_corpus(paths.extractive) if cls.uses_corpus else None
    method = build_method(name, cfg.options.get(name), corpus, load_state(cls.needs, paths))
    frame = read_parquet(Path(paths.processed) / f"{split}.parquet", contract=PROCESSED)
    _check_outputs(paths, name, split)
    refs = references_of(frame)
    limit = Limit(sentences=cfg.sentences, tokens=cfg.tokens)
    analyzer = Analyzer()
    predictions, selected, binds = [], [], 0
    started = time.perf_counter()
    for key, source, references in zip(frame["id"].astype(str), frame["source"].fillna(""), refs):
        doc = analyzer.parse(source, references[0] if method.uses_reference else None, key)
        chosen = method.select(doc, limit)
        predictions.append(doc.text(chosen))
        selected.append(chosen)
        binds += (cfg.sentences is not None and doc.n_sentences > cfg.sentences) or \
                 (cfg.tokens is not None and int(doc.lengths.sum()) > cfg.tokens)
    out: dict[str, Any] = {"id": frame["id"].astype(str), "prediction": predictions, "reference": frame["reference"]}
    if "references" in frame.columns:
        out["references"] = frame["references"]
    out["selected"] = selected
    if method.uses_reference:
        out["reads_reference"] = True  # evaluate and the report label this system as an upper bound
    path = write_parquet(pd.DataFrame(out), Path(paths.predictions) / name / f"{split}.parquet")
    result = SystemResult(path, len(frame), binds / max(len(frame), 1), time.perf_counter() - started)
    _record_timings(paths.timings, name, result)
    return result


def _check_outputs(paths: PathsConfig, name: str, split: str) -> None:
    """Before the documents are summarised: the predictions and the run's timings can be written."""
    from sumpipe.io.bookkeeping import check_replaceable
    from sumpipe.timings import check_writable

    check_replaceable(Path(paths.predictions) / name / f"{split}.parquet", "the predictions")
    check_writable(paths.timings, "extractive", name)


def _record_timings(timings_dir: str, name: str, result: SystemResult) -> None:
    from sumpipe.timings import record_run

    record_run(timings_dir, "extractive", name, {
        "documents": result.documents, "seconds": round(result.seconds, 3),
        "docs_per_s": round(result.documents / result.seconds, 2) if result.seconds > 0 else None,
    })
