"""The public Python API of a trained model: `sumpipe.load(name_or_folder)` -> a `Summarizer`.

    import sumpipe
    s = sumpipe.load("M2")                        # a name under models/, or a model folder
    summary = s.summarize("Return a new sorted list from the items in iterable. ...")
    print(summary)                                # its readable text
    summaries = s.summarize(texts, beam=4, details=True)  # a list in, a list out; batched inside

This is what `sumpipe decode INPUT` runs (`sumpipe.decode.interactive.summarize_input`), so a
notebook and the command give the same summary for the same text and options:

- the model is found by the command's resolver (`sumpipe.decode.interactive.find_model_dir`): a
  folder holding a model card, else a name under `paths.models`, else (no name) the trained model
  with the best mean R-L in `metrics/rouge.json`, else M1; of a model trained with several seeds,
  the seed `seed` asks for, else the one with the lowest validation loss (`sumpipe.models.folders`);
- `ensemble=True` (every trained seed) or `seeds=[1, 2]` (those seeds) decode the model's seeds as one
  summarizer (`sumpipe.decode.ensemble`: each step's distributions averaged, one beam search over the
  mean; the command's `--ensemble` and `--train-seed 1,2`); a single seed is that model alone;
- raw text goes through the training preprocessing and the model's input selection
  (`sumpipe.decode.batches.prepare_raw`), then length-sorted batches of `decode.batch_size`
  (`sumpipe.decode.batches.summarize`);
- decoding options are the command's (`beam`, `greedy`, `sample`, `top_k`, `top_p`, `temperature`,
  `seed`, `min_length`, `max_length`, `length_penalty`, `block_ngram`, `block_adjacent`, `length`,
  `unit`, `known_words`, `repeat_stop_words`, `novel_bigram_penalty`, plus `batch_size` and
  `banned_words`) over
  params.yaml's `decode:` section, checked the same way: a bad value is one line naming the option.

Loading reads only the model card; the weights (and torch) load on the first `summarize`, so bad
input fails before torch is imported. `Summary` is the one result type of every summarizer
(`sumpipe.load_extractive` returns the same).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from sumpipe.config import DecodeConfig, Params
from sumpipe.decode.domain import DomainCheck
from sumpipe.decode.interactive import no_text, text_error
from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.models.card import ModelCard

PARAMS_FILE = "params.yaml"

# the summarize() keywords that are DecodeConfig fields, by the field they set (the command's options)
DECODE_OPTIONS = {
    "beam": "beam_size", "top_k": "top_k", "top_p": "top_p", "temperature": "temperature", "seed": "seed",
    "min_length": "min_length", "max_length": "max_length", "length_penalty": "length_penalty",
    "block_ngram": "block_ngram_repeat", "block_adjacent": "block_adjacent_repeat", "batch_size": "batch_size",
    "length": "target_length", "unit": "length_unit", "known_words": "known_words",
    "repeat_stop_words": "repeat_stop_words", "banned_words": "banned_words",
    "novel_bigram_penalty": "novel_bigram_penalty",
}


@dataclass(frozen=True)
class Summary:
    """One summary of one input text.

    `text` is readable prose (what `sumpipe decode` prints: detokenised, sentences capitalised, every
    word spelled as the input spells it; an extractive method's: the input's own sentences); it is
    made on first use (`sumpipe.decode.readable`: NLTK's detokenizer, whose import alone takes longer
    than decoding the 454 test documents), so a run that reads only `tokenized` never pays for it.
    `tokens` are the pipeline's lowercased tokens and `tokenized` the same as text, one sentence a
    line (what ROUGE scores, `--tokens`). `score` is log P / length penalty (None for an extractive
    method). `source_tokens` (S,) are what the summarizer read (after preprocessing and the input
    selection). With `details=True`: `p_gen` (T,) the generation probability of each token,
    `attention` (T, S) float32 the copy attention, `head_attention` (H, T, S) per head for a
    multi-head copy attention (the transformer's); None otherwise. `sentences`: the indices of the
    sentences an extractive method chose. `error` says why a text got no summary (nothing left to
    summarise: `text` is then ""). `source` is the input text (its spellings make `text`); `prose`
    the readable text when it is known at once (an extractive method's).
    """

    tokens: list[str]
    tokenized: str
    score: float | None
    source_tokens: list[str]
    p_gen: list[float] | None = None
    attention: Any = None
    head_attention: Any = None
    sentences: list[int] | None = None
    error: str | None = None
    source: str = field(default="", repr=False)
    prose: str | None = field(default=None, repr=False)

    @functools.cached_property
    def text(self) -> str:
        if self.prose is not None or self.error:
            return self.prose or ""
        from sumpipe.decode.readable import readable

        return readable(self.tokenized, self.source)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Project:
    """Where a `dvc repro` ran: its folder and its params (paths in params.yaml are relative to it)."""

    root: Path
    params: Params

    def path(self, relative: str) -> Path:
        return self.root / relative

    @property
    def models_root(self) -> Path:
        return self.path(self.params.paths.models)

    @property
    def metrics_file(self) -> Path:
        return self.path(self.params.paths.metrics) / "rouge.json"


def open_project(project: str | os.PathLike[str] = ".", params: str | os.PathLike[str] | None = None) -> Project:
    """The project in folder `project` with params file `params` (default: its params.yaml; when that
    default is missing, the built-in defaults, so a model folder summarises from anywhere)."""
    from sumpipe.config import load_params

    root = Path(project)
    if params is None:
        path = root / PARAMS_FILE
        return Project(root, load_params(path) if path.is_file() else Params())
    return Project(root, load_params(Path(params)))


def decode_config(base: DecodeConfig, options: dict[str, Any], shown: Callable[[str], str] = str) -> DecodeConfig:
    """`base` with the summarize() `options` applied (None: not given), validated by DecodeConfig; a bad
    value is one line naming the option as `shown` spells it (`beam`, or `--beam` for the command)."""
    from sumpipe.validation import from_dict

    unknown = sorted(set(options) - set(DECODE_OPTIONS) - {"greedy", "sample"})
    if unknown:
        raise SumpipeError(f"{unknown[0]}: unknown decoding option (known: "
                           f"{', '.join(sorted([*DECODE_OPTIONS, 'greedy', 'sample']))})")
    overrides: dict[str, Any] = {DECODE_OPTIONS[k]: v for k, v in options.items()
                                 if k in DECODE_OPTIONS and v is not None}
    if options.get("greedy") and options.get("sample"):
        raise SumpipeError(f"{shown('greedy')} and {shown('sample')} exclude each other")
    if options.get("greedy") or options.get("sample"):
        overrides["strategy"] = "greedy" if options.get("greedy") else "sample"
    elif "beam_size" in overrides:
        overrides["strategy"] = "beam"
    if overrides.get("max_length") is not None and "min_length" not in overrides:
        # a cap the caller gives wins over the configured minimum (params.yaml's 10 words for docstrings)
        overrides["min_length"] = min(base.min_length, overrides["max_length"])
    field_names = {field: shown(option) for option, field in DECODE_OPTIONS.items()}
    try:
        return from_dict(DecodeConfig, {**dataclasses.asdict(base), **overrides}, "")
    except ConfigError as exc:
        key, _, why = str(exc).partition(": ")
        if key not in overrides:
            raise ConfigError(f"decode.{exc}") from None
        for field, option in field_names.items():
            why = why.replace(field, option)
        raise SumpipeError(f"{field_names[key]}: {why}") from None


class Summarizer:
    """A trained model folder, ready to summarise raw text (module docstring). Build it with
    `sumpipe.load`; `model_dir`, `card` (the `ModelCard`) and `config` (the decoding defaults) are
    public."""

    def __init__(self, model_dir: Path, project: Project, device: str | None = None,
                 members: Sequence[Path] = ()) -> None:
        from sumpipe.models.card import read_card

        # an ensemble's seed folders (`model_dir` is the first); one folder alone is that model
        self.members: list[Path] = list(members) if len(members) > 1 else [model_dir]
        self.model_dir = self.members[0]
        self.project = project
        self.card: ModelCard = read_card(self.model_dir)
        self.config: DecodeConfig = project.params.decode
        self.device = device or self.config.device
        self._loaded: tuple[Any, Any, ModelCard] | None = None
        self._loading = threading.Lock()  # several threads' first summarize load the weights once

    @classmethod
    def open(cls, project: Project, model: str | os.PathLike[str] | None = None,
             device: str | None = None, seed: int | None = None, seeds: Sequence[int] | None = None,
             ensemble: bool = False) -> Summarizer:
        """The model `model` of `project`, trained with `seed` (default: the seed with the lowest
        validation loss; the command's resolver: module docstring); with `ensemble` or several `seeds`,
        those seeds as one ensemble (every trained seed when `seeds` is None)."""
        from sumpipe.decode.interactive import find_ensemble, find_model_dir

        name = None if model is None else os.fspath(model)
        if name in project.params.ensembles:
            return cls.open_ensemble(project, name, device, seed=seed, seeds=seeds)
        preferred = list(project.params.models)
        if seeds is not None:
            if seed is not None:
                raise SumpipeError("seed and seeds exclude each other: give one seed, or a list of them")
            if not seeds:
                raise SumpipeError("seeds: give at least one training seed")
            if len(set(seeds)) == 1 and not ensemble:
                seed, seeds = seeds[0], None
        if ensemble and seed is not None:
            raise SumpipeError("seed picks one seed's weights, ensemble all of them: give seeds=[...] for a subset")
        ensembles = list(project.params.ensembles)  # valid names too: an unknown model's error lists them
        if ensemble or seeds is not None:
            members = find_ensemble(name, project.models_root, project.metrics_file, preferred, seeds, ensembles)
            return cls(members[0], project, device, members)
        return cls(find_model_dir(name, project.models_root, project.metrics_file, preferred, seed=seed,
                                  ensembles=ensembles), project, device)

    @classmethod
    def open_ensemble(cls, project: Project, name: str, device: str | None = None, seed: int | None = None,
                      seeds: Sequence[int] | None = None) -> Summarizer:
        """The ensemble `name` of params.yaml's `ensembles:` (`PG-cov-ens`), the seeds the predict
        stage decodes as one, so the README's tables and `sumpipe decode --model NAME` name the same system.
        Its seeds are params.yaml's: a seed given with it is an error."""
        from sumpipe.decode.interactive import find_ensemble

        if seed is not None or seeds is not None:
            raise SumpipeError(f"{name} is an ensemble (ensembles.{name} in params.yaml) and its seeds are "
                               f"params.yaml's: open its model {project.params.ensembles[name].model} to choose seeds")
        spec = project.params.ensembles[name]
        members = find_ensemble(spec.model, project.models_root, project.metrics_file, [spec.model],
                                project.params.ensemble_seeds(name))
        return cls(members[0], project, device, members)

    @property
    def name(self) -> str:
        """The model's name: `M2` for its seed folder `models/M2/seed-2`."""
        from sumpipe.models.folders import model_group

        return model_group(self.model_dir, self.card).name

    @property
    def seed(self) -> int | None:
        """The training seed of the weights that answer (None: a folder made without one, or an ensemble)."""
        return None if self.is_ensemble else self.card.seed

    @property
    def is_ensemble(self) -> bool:
        return len(self.members) > 1

    @property
    def seeds(self) -> list[int | None]:
        """The training seed of each member (one for a single model)."""
        from sumpipe.models.card import read_card

        return [self.card.seed] if not self.is_ensemble else [read_card(folder).seed for folder in self.members]

    def __repr__(self) -> str:
        what = f" (an ensemble of {len(self.members)} seeds)" if self.is_ensemble else ""
        return f"<Summarizer {self.name}{what}: {self.card.family}, input {self.card.input or 'the whole text'}>"

    def weights(self) -> tuple[Any, Any, ModelCard]:
        """(model in eval mode, vocabulary, card), loaded on first use and kept; an ensemble's model is an
        `EnsembleModel` of its members and its card the first member's."""
        if self._loaded is None:
            with self._loading:
                if self._loaded is None:
                    self._load()
        assert self._loaded is not None  # _load sets it or raises
        return self._loaded

    def _load(self) -> None:
        """Load the weights into `_loaded` (under `_loading`, by `weights`)."""
        from sumpipe.device import resolve_device

        device = resolve_device(self.device, "decode.device")
        if self.is_ensemble:
            from sumpipe.decode.ensemble import load_ensemble

            self._loaded = load_ensemble(self.members, device=device)
        else:
            from sumpipe.decode.batches import load_model

            self._loaded = load_model(self.model_dir, device=device)

    def prepare(self, texts: Sequence[str]) -> list[str]:
        """Raw texts -> the model's inputs (preprocessed, selected); "" where nothing is left."""
        from sumpipe.decode.batches import has_words, prepare_raw

        prepared = [prepare_raw(text, self.card, self.project.path(self.project.params.paths.vocab)) for text in texts]
        return [text if has_words(text) else "" for text in prepared]

    @overload
    def summarize(self, texts: str, *, details: bool = ..., threads: int | None = ..., **options: Any) -> Summary: ...

    @overload
    def summarize(self, texts: Sequence[str], *, details: bool = ..., threads: int | None = ...,
                  **options: Any) -> list[Summary]: ...

    def summarize(self, texts: str | Sequence[str], *, details: bool = False, threads: int | None = None,
                  strict: bool = True, generator: Any = None, progress: Callable[[int], None] | None = None,
                  **options: Any) -> Summary | list[Summary]:
        """The summary of one text, or of each text of a list (in order). `options`: the decoding
        options of the module docstring; `details`: p_gen and attention too. `threads`: torch's CPU
        threads while decoding (None: one for a single batch, whose tiny matrices two threads only
        slow down, else torch's default; `OMP_NUM_THREADS` wins). A text with nothing left to summarise
        gets an empty `Summary` with its `error`; when no text has any, that is a SumpipeError (with
        `strict=False`, every summary says so instead). `generator`: the random stream of sampling
        (`generator(options)`; default: a fresh one seeded with `seed`). `progress(n)` is called after
        each batch with the number of texts it summarised (a progress bar's update)."""
        import sumpipe.arguments as arguments  # not `from sumpipe import`: the package is the API

        documents, single = arguments.texts(texts)  # a wrong type or a NUL byte: one line (sumpipe.arguments)
        details, strict = arguments.flag(details, "details"), arguments.flag(strict, "strict")
        threads = arguments.optional_whole(threads, "threads", 1)
        if generator is not None:
            import torch

            if not isinstance(generator, torch.Generator):
                raise SumpipeError(f"generator: expected a torch.Generator, got {type(generator).__name__}")
        if progress is not None and not callable(progress):
            raise SumpipeError(f"progress: expected a function of the texts done, got {type(progress).__name__}")
        cfg = decode_config(self.config, options)
        prepared = self.prepare(documents)
        todo = [i for i, text in enumerate(prepared) if text]
        if not todo:
            if strict:
                raise SumpipeError(no_text(len(documents)))
            return [self._summary(raw, None) for raw in documents]
        decoded = self._decode([prepared[i] for i in todo], cfg, details, threads, generator, progress)
        by_doc = dict(zip(todo, decoded))
        out = [self._summary(documents[i], by_doc.get(i)) for i in range(len(documents))]
        return out[0] if single else out

    def generator(self, options: dict[str, Any]) -> Any:
        """A random stream for sampling with `options` (None unless they sample): one stream shared by
        several `summarize` calls, so a text's summary does not depend on how the texts were split."""
        cfg = decode_config(self.config, options)
        if cfg.strategy != "sample":
            return None
        from sumpipe.decode.batches import model_device
        from sumpipe.decode.search import make_generator

        return make_generator(cfg.seed, model_device(self.weights()[0]))

    def _decode(self, documents: list[str], cfg: DecodeConfig, details: bool, threads: int | None,
                generator: Any = None, progress: Callable[[int], None] | None = None) -> list[Any]:
        from sumpipe.decode.batches import summarize
        from sumpipe.device import torch_threads

        if threads is None and "OMP_NUM_THREADS" not in os.environ and len(documents) <= cfg.batch_size:
            threads = 1
        with torch_threads(threads):
            model, vocab, card = self.weights()
            return summarize(model, vocab, card, documents, cfg, details=details, generator=generator,
                             progress=None if progress is None else lambda batch, _seconds: progress(len(batch)))

    def domain_check(self, summaries: Sequence[Summary]) -> DomainCheck | None:
        """The words these summaries' texts gave the model (their `source_tokens`) against its vocabulary
        and its training texts (`sumpipe.decode.domain`); `.note()` is `sumpipe decode`'s line when they
        look unlike the training corpus. None for a model without a word vocabulary (subwords: BERT2S)."""
        from sumpipe.decode.domain import DomainCheck, corpus_share, count_outside, train_tokens
        from sumpipe.models.folders import model_group
        from sumpipe.vocab.vocabulary import Vocabulary

        vocab = self.weights()[1]
        if not isinstance(vocab, Vocabulary):
            return None
        outside, total = count_outside((s.source_tokens for s in summaries if not s.error), vocab)
        # the training token count is the project's: read only for a model of its own paths.models
        group = model_group(self.model_dir, self.card)
        own = group.resolve() == (self.project.models_root / group.name).resolve()
        n_train = train_tokens(self.project.path(self.project.params.paths.metrics)) if own else None
        return DomainCheck(self.name, self.card.dataset, outside, total, corpus_share(vocab, n_train))

    @staticmethod
    def _summary(raw: str, decoded: Any) -> Summary:
        if decoded is None:
            return Summary([], "", None, [], error=text_error(raw), source=raw)
        return Summary(decoded.tokens, decoded.text, decoded.score, decoded.source_tokens, decoded.p_gen,
                       decoded.attention, decoded.head_attention, source=raw)


def load(model: str | os.PathLike[str] | None = None, *, seed: int | None = None, seeds: Sequence[int] | None = None,
         ensemble: bool = False, project: str | os.PathLike[str] = ".", params: str | os.PathLike[str] | None = None,
         device: str | None = None) -> Summarizer:
    """A summarizer for a trained model.

    `model`: a model folder (with its config.json, or a model's folder of seeds), a model's name
    under the project's `paths.models` (`"M2"`), or the name of an ensemble of params.yaml's `ensembles:`
    (`"PG-cov-ens"`: its seeds as one summarizer); None: the trained model with the best mean R-L in
    `metrics/rouge.json` (else M1). `seed`: which training seed's weights (default: the seed with the
    lowest validation loss; `.seed` says which answered). `ensemble=True`: every trained seed of the
    model as one ensemble (`sumpipe.decode.ensemble`); `seeds=[1, 2]`: those seeds (one seed: that seed
    alone); `.seeds` says which. `project`: the folder `dvc repro` ran in
    (default: the current one); `params`: its params file (default: `<project>/params.yaml`, or the
    built-in defaults without one). `device`: "cpu", "cuda" or "auto" (default: params.yaml's
    `decode.device`). Reads the model card only: the weights load on the first `summarize`.
    """
    import sumpipe.arguments as arguments  # not `from sumpipe import`: the package is the API

    model = arguments.optional_path(model, "model")
    seed = arguments.optional_whole(seed, "seed", 0)
    seeds = arguments.seeds(seeds)
    ensemble = arguments.flag(ensemble, "ensemble")
    project, params = arguments.path(project, "project"), arguments.optional_path(params, "params")
    device = arguments.device(device)
    return Summarizer.open(open_project(project, params), model, device, seed=seed, seeds=seeds, ensemble=ensemble)
