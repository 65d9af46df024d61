"""Decoding settings chosen on the validation split, over every training seed: `sumpipe decoding`.

    experiments/decoding/params.yaml ─► run_decoding(cfg) ─► <out>/decoding.json, <out>/decoding.md

Length and repetition are decoding choices (Morozovskii 2022 §2.3.4: beam search with a GNMT length penalty;
a minimum length; n-gram and adjacent-repeat blocking), and ROUGE F1 rewards the length the references
have, so they are chosen like any hyper-parameter: on validation, never on test. Each setting is a
set of `decode:` keys over params.yaml's (`min_length`, `length_penalty`, `block_adjacent_repeat`,
...: validated as the `decode:` section is). For every model named and every seed of `train.seeds` the
trained model (`models/<m>/seed-<s>/`, from `dvc repro`) summarises the validation split of its input
selection under each setting; the table gives, per model and setting, ROUGE-1/2/L F1 x 100 (mean ±
sd over the seeds), the length in words (punctuation not counted) and the shares of summaries with a
word twice in a row and of distinct summaries (`sumpipe.evaluate.abstractiveness`), beside the one-
lead-sentence baseline of the same documents and the references' length, and the rare-word recall
(`sumpipe.evaluate.rare_words`: the share of the reference's rare content words, at most
`evaluate.rare_word_max_count` training occurrences, that the summary holds).

ROUGE F1 rewards length, a reader does not: a model pushed past the end of its sentence pads
("Convert degrees to a temperature Celsius temperature. Degrees."). So each setting is also measured
for what a reader gets (`sumpipe.evaluate.read_quality`: fragment rate, sentences per summary, ...),
with the split's references as the anchor, and the setting is chosen under guards: among the
settings whose fragment rate (mean over the seeds) is at most the references' + `guards.fragments`
points and whose sentences per summary are at most the references' mean + `guards.sentences` (and,
where set, whose repeated words and jammed pairs, the two measures validated for fluency, are at most
the references' + `guards.repeated_words`, + `guards.jammed_pairs` points, whose unsupported words, the
faithfulness measure, at most the references' + `guards.unsupported_stems` points, and whose sentences
per summary are at least the references' mean - `guards.few_sentences`: news models that write one
run-on sentence against the highlights' 3.65), the
best validation `choose_by` (R-L) wins, per model and for the experiment as a whole (the setting that
passes for every model with the best mean over the models: what params.yaml's one `decode:` keeps).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sumpipe.validation import require

ENSEMBLE = " ensemble"   # the row of a model's seeds decoded as one (`sumpipe.decode.ensemble`)
RESULTS_JSON = "decoding.json"
RESULTS_MD = "decoding.md"
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
SHAPE_FIGURES = ("mean_words", "distinct")                 # sumpipe.evaluate.abstractiveness
READ_FIGURES = ("fragment_rate", "sentences_mean", "more_sentences_than_reference", "adjacent_repeat",
                "repeated_words", "unsupported_stems", "jammed_pairs")     # sumpipe.evaluate.read_quality
RARE_FIGURES = ("rare_word_recall",)                         # sumpipe.evaluate.rare_words, x 100
FIGURES = ROUGE_TYPES + SHAPE_FIGURES + READ_FIGURES + RARE_FIGURES


@dataclass(frozen=True)
class Guards:
    """The read-quality guards a setting must pass to be chosen: its fragment rate at most the
    references' + `fragments` points, its sentences per summary at most the references' mean +
    `sentences`, and, when `repeated_words` is set, its repeated words (`read_quality`'s repetition at a
    distance, the measure validated for fluency: docs/measures.md) at most the references' + that many
    points, and, when `jammed_pairs` is set, its jammed pairs (adjacent content words the source never
    writes side by side, the second measure validated for fluency) at most the references' + that
    many points, and, when `unsupported_stems` is set, its unsupported words (`read_quality`'s content words
    the source does not hold, compared by their stems: the faithfulness measure) at most the references' +
    that many points, and, when `few_sentences` is set, its sentences per summary at least the references' mean -
    `few_sentences` (a news model's run-on sentence where the references have 3.65) (means over the seeds).
    The optional four off by default: the default run's choice was made without them."""

    fragments: float = 1.0
    sentences: float = 0.1
    repeated_words: float | None = None
    jammed_pairs: float | None = None
    unsupported_stems: float | None = None
    few_sentences: float | None = None

    def check(self, key: str) -> None:
        require(self.fragments >= 0, f"{key}.fragments", "must be >= 0")
        require(self.sentences >= 0, f"{key}.sentences", "must be >= 0")
        require(self.repeated_words is None or self.repeated_words >= 0, f"{key}.repeated_words", "must be >= 0")
        require(self.jammed_pairs is None or self.jammed_pairs >= 0, f"{key}.jammed_pairs", "must be >= 0")
        require(self.unsupported_stems is None or self.unsupported_stems >= 0, f"{key}.unsupported_stems",
                "must be >= 0")
        require(self.few_sentences is None or self.few_sentences >= 0, f"{key}.few_sentences", "must be >= 0")

    def passes(self, figures: dict[str, Any], anchor: dict[str, float]) -> bool:
        return (figures["fragment_rate"]["mean"] <= anchor["fragment_rate"] + self.fragments
                and figures["sentences_mean"]["mean"] <= anchor["sentences_mean"] + self.sentences
                and (self.repeated_words is None
                     or figures["repeated_words"]["mean"] <= anchor["repeated_words"] + self.repeated_words)
                and (self.jammed_pairs is None
                     or figures["jammed_pairs"]["mean"] <= anchor["jammed_pairs"] + self.jammed_pairs)
                and (self.unsupported_stems is None
                     or figures["unsupported_stems"]["mean"] <= anchor["unsupported_stems"] + self.unsupported_stems)
                and (self.few_sentences is None
                     or figures["sentences_mean"]["mean"] >= anchor["sentences_mean"] - self.few_sentences))


@dataclass(frozen=True)
class DecodingSweep:
    """experiments/decoding/params.yaml: `repo` (the project whose params.yaml, models and data are
    used, relative to the sweep's folder), the `models` to decode (each seed alone), the models whose
    seeds are also decoded as one (`ensembles`: a row `<model> ensemble`), the `split` (never test), the
    named `settings` (each a mapping of `decode:` keys), the read-quality `guards` and the ROUGE
    type the choice maximises among the settings that pass them (`choose_by`)."""

    repo: str = "../.."
    models: list[str] = field(default_factory=lambda: ["M1"])
    ensembles: list[str] = field(default_factory=list)
    split: str = "valid"
    settings: dict[str, dict[str, Any]] = field(default_factory=lambda: {"params.yaml": {}})
    guards: Guards = field(default_factory=Guards)
    choose_by: Literal["rouge1", "rouge2", "rougeL"] = "rougeL"
    out: str = "results"

    def check(self, key: str) -> None:
        require(self.split in ("train", "valid"), f"{key}.split" if key else "split",
                "must be train or valid: settings are chosen without reading the test split")
        require(bool(self.models), f"{key}.models" if key else "models", "needs at least one model")
        require(bool(self.settings), f"{key}.settings" if key else "settings", "needs at least one setting")


def setting_configs(sweep: DecodingSweep, base: Any) -> dict[str, Any]:
    """{setting: DecodeConfig} (params.yaml's `decode:` with the setting's keys, validated); a bad key or
    value is one line naming `settings.<name>.<key>`."""
    from sumpipe.config import DecodeConfig
    from sumpipe.validation import from_dict

    return {name: from_dict(DecodeConfig, {**dataclasses.asdict(base), **keys}, f"settings.{name}")
            for name, keys in sweep.settings.items()}


def run_decoding(sweep: DecodingSweep, repo: Path) -> dict[str, Any]:
    """Decode every (model, seed, setting), choose under the guards, write the results (module
    docstring) and return them."""
    import numpy as np

    from sumpipe.config import load_params
    from sumpipe.decode.batches import summarize
    from sumpipe.errors import SumpipeError
    from sumpipe.evaluate.rare_words import rare_word_recall
    from sumpipe.evaluate.read_quality import name_dots
    from sumpipe.evaluate.rouge import FastRouge, score_pairs
    from sumpipe.evaluate.stage import lead_sentences
    from sumpipe.io.atomic import read_parquet, write_json, write_text
    from sumpipe.schemas import references_of

    params = load_params(repo / "params.yaml")
    configs = setting_configs(sweep, params.decode)
    unknown = [m for m in [*sweep.models, *sweep.ensembles] if m not in params.models]
    if unknown:
        raise SumpipeError(f"models: {unknown[0]!r} is not a model of {repo / 'params.yaml'} "
                           f"(known: {', '.join(params.models) or 'none'})")
    scorer = FastRouge(ROUGE_TYPES, params.evaluate.use_stemmer)
    processed = read_parquet(repo / params.paths.processed / f"{sweep.split}.parquet").set_index("id")
    raw = read_parquet(repo / params.paths.raw / f"{sweep.split}.parquet").set_index("id")
    train = read_parquet(repo / params.paths.raw / "train.parquet")
    words = read_parquet(repo / params.paths.vocab / "words.parquet")   # the vocab stage's training counts
    counts = dict(zip(words["token"], words["count"].astype(int)))
    corpus = name_dots("\n".join(f"{s}\n{refs[0] if len(refs) else ''}"
                                 for s, refs in zip(train["source"], references_of(train))))
    results: dict[str, Any] = {"split": sweep.split, "seeds": {m: params.seeds_of(m) for m in sweep.models},
                               "ensembles": sweep.ensembles,
                               "settings": sweep.settings, "guards": dataclasses.asdict(sweep.guards),
                               "choose_by": sweep.choose_by, "models": {}}
    for name in [*sweep.models, *(f"{m}{ENSEMBLE}" for m in sweep.ensembles)]:
        spec = params.models[name.removesuffix(ENSEMBLE)]
        frame = read_parquet(repo / params.paths.extracted / spec.input / f"{sweep.split}.parquet")
        sources = [processed.loc[i, "source"] for i in frame["id"]]
        raw_sources = [raw.loc[i, "source"] for i in frame["id"]]
        references = frame["reference"].tolist()
        lead = [lead_sentences(source, 1) for source in sources]
        lead_r1 = 100 * float(score_pairs(lead, references, scorer=scorer)["rouge1_fmeasure"].mean())
        per_setting: dict[str, dict[str, list[float]]] = {s: {f: [] for f in FIGURES} for s in configs}
        for model, vocab, card in _decoders(params, repo, name):
            for setting, cfg in configs.items():
                texts = [s.text for s in summarize(model, vocab, card, frame["source"].tolist(), cfg)]
                for figure, value in figures_of(texts, sources, references, raw_sources, corpus, scorer).items():
                    per_setting[setting][figure].append(value)
                recall = rare_word_recall(texts, references, counts, params.evaluate.rare_word_max_count)
                per_setting[setting]["rare_word_recall"].append(100 * float(np.nanmean(recall)))
        results["models"][name] = {"lead1_rouge1": round(lead_r1, 2),
                                   "settings": {s: _summary(figures) for s, figures in per_setting.items()}}
    results["references"] = reference_anchor(processed, raw, corpus)
    results["chosen"] = choose(results, sweep.guards, sweep.choose_by)
    out = Path(sweep.out)
    write_json(results, out / RESULTS_JSON)
    write_text(render(results), out / RESULTS_MD)
    return results


def _decoders(params: Any, repo: Path, name: str) -> Any:
    """(model, vocab, card) of each seed of model `name`, or, for `<model> ensemble`, one ensemble of them."""
    from sumpipe.decode.batches import load_model
    from sumpipe.decode.ensemble import load_ensemble
    from sumpipe.names import seed_folder

    model = name.removesuffix(ENSEMBLE)
    folders = [repo / params.paths.models / model / seed_folder(seed) for seed in params.seeds_of(model)]
    if name.endswith(ENSEMBLE):
        yield load_ensemble(folders)
    else:
        yield from (load_model(folder) for folder in folders)


def figures_of(texts: list[str], sources: list[str], references: list[str], raw_sources: list[str],
               corpus: frozenset[tuple[str, str]], scorer: Any) -> dict[str, float]:
    """One seed's summaries under one setting: ROUGE F1 x 100, length and distinct share, and the
    read-quality figures (`READ_FIGURES`; the raw sources' and the train split's (`corpus`) names'
    dots are no sentence ends)."""
    from sumpipe.evaluate.abstractiveness import abstractiveness
    from sumpipe.evaluate.read_quality import read_quality
    from sumpipe.evaluate.rouge import score_pairs

    scores = score_pairs(texts, references, scorer=scorer)
    shape = abstractiveness(texts, [""] * len(texts))
    quality = read_quality(texts, sources, references, raw_sources=raw_sources, corpus_dots=corpus)
    return ({t: 100 * float(scores[f"{t}_fmeasure"].mean()) for t in ROUGE_TYPES}
            | {f: float(shape[f]) for f in SHAPE_FIGURES} | {f: float(quality[f]) for f in READ_FIGURES})


def _summary(figures: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    """{figure: {mean, sd (None for one seed), seeds}}, rounded to 2 decimals."""
    import numpy as np

    return {f: {"mean": round(float(np.mean(v)), 2),
                "sd": round(float(np.std(v, ddof=1)), 2) if len(v) > 1 else None,
                "seeds": [round(x, 2) for x in v]}
            for f, v in figures.items()}


def reference_anchor(processed: Any, raw: Any, corpus: frozenset[tuple[str, str]]) -> dict[str, float]:
    """The split's references measured as summaries: the anchor of every guard, and their length in
    words (mean, 10th and 90th percentile). processed, raw: the split's frames, indexed by id."""
    import pandas as pd

    from sumpipe.evaluate.read_quality import read_quality

    references = processed["reference"].tolist()
    quality = read_quality(references, processed["source"].tolist(), references,
                           raw_sources=raw.loc[processed.index, "source"].tolist(),
                           raw_references=raw.loc[processed.index, "reference"].tolist(), corpus_dots=corpus)
    words = pd.Series([len([t for t in r.split() if any(c.isalnum() for c in t)]) for r in references])
    return {**{f: round(float(quality[f]), 2) for f in READ_FIGURES},
            "mean_words": round(float(words.mean()), 2), "p10": float(words.quantile(0.1)),
            "p90": float(words.quantile(0.9))}


def choose(results: dict[str, Any], guards: Guards, choose_by: str) -> dict[str, Any]:
    """The chosen settings: per model, the best `choose_by` among the settings that pass the guards
    (None when none does); "all models", the setting that passes for every model with the best mean
    `choose_by` over the models (None when none does)."""
    anchor = results["references"]
    passing = {name: [s for s, figures in model["settings"].items() if guards.passes(figures, anchor)]
               for name, model in results["models"].items()}

    def value(name: str, setting: str) -> float:
        return float(results["models"][name]["settings"][setting][choose_by]["mean"])

    chosen: dict[str, Any] = {name: max(ok, key=lambda s: value(name, s)) if ok else None
                              for name, ok in passing.items()}
    shared = [s for s in results["settings"] if all(s in ok for ok in passing.values())]
    chosen["all models"] = (max(shared, key=lambda s: sum(value(m, s) for m in passing) / len(passing))
                            if shared else None)
    return chosen


def _later_figure(figures: dict[str, Any], key: str) -> str:
    """A setting's figure added after results were first written (jammed pairs, rare-word recall),
    or "–" in results written before it."""
    return f"{figures[key]['mean']:.1f}" if key in figures else "–"


def _unsupported(figures: dict[str, Any]) -> str:
    """The faithfulness figure of a setting or of the references (`read_quality`'s unsupported stems), or, in
    results written before it, the token-based figure it replaced (`unsupported_words`)."""
    key = "unsupported_stems" if "unsupported_stems" in figures else "unsupported_words"
    value = figures[key]
    return f"{value['mean'] if isinstance(value, dict) else value:.1f}"


def render(results: dict[str, Any]) -> str:
    """The results as a markdown table: one row per (model, setting), the guards' verdict and the choice."""
    ref, guards, by = results["references"], results["guards"], results["choose_by"]
    seeds = results["seeds"]   # {model: its seeds} (a list in results written before models had their own)
    seeds_text = ("; ".join(f"{m} {', '.join(map(str, v))}" for m, v in seeds.items()) if isinstance(seeds, dict)
                  else ", ".join(map(str, seeds)))
    lines = [f"# Decoding settings on the {results['split']} split (seeds {seeds_text})",
             "", f"Mean ± sd over the seeds; references: {ref['mean_words']:.1f} words (10th-90th percentile "
                 f"{ref['p10']:.0f}-{ref['p90']:.0f}), fragment rate {ref['fragment_rate']:.1f} %, "
                 f"{ref['sentences_mean']:.2f} sentences, {_unsupported(ref)} % unsupported words"
                 + (f", {ref['jammed_pairs']:.1f} % jammed pairs" if "jammed_pairs" in ref else "") + ". "
                 f"Guards: fragment rate <= {ref['fragment_rate'] + guards['fragments']:.1f} % (the references' "
                 f"+ {guards['fragments']:g}), sentences <= {ref['sentences_mean'] + guards['sentences']:.2f} "
                 f"(the references' + {guards['sentences']:g})"
             + (f", repeated words <= {ref['repeated_words'] + guards['repeated_words']:.1f} % (the references' + "
                f"{guards['repeated_words']:g})" if guards.get("repeated_words") is not None else "")
             + (f", jammed pairs <= {ref['jammed_pairs'] + guards['jammed_pairs']:.1f} % (the references' + "
                f"{guards['jammed_pairs']:g})" if guards.get("jammed_pairs") is not None else "")
             + (f", unsupported words <= {ref['unsupported_stems'] + guards['unsupported_stems']:.1f} % (the "
                f"references' + {guards['unsupported_stems']:g})" if guards.get("unsupported_stems") is not None
                else "")
             + (f", sentences >= {ref['sentences_mean'] - guards['few_sentences']:.2f} (the references' - "
                f"{guards['few_sentences']:g})" if guards.get("few_sentences") is not None else "")
             + f"; chosen (**bold**): the best {by} among the "
                 "settings that pass. Settings (over params.yaml's `decode:`): "
             + "; ".join(f"`{name}` {keys or 'as is'}" for name, keys in results["settings"].items()) + ".", "",
             "| model | setting | R-1 | R-2 | R-L | words | fragments % | sentences | more sentences than "
             "the reference % | word twice % | repeated words % | unsupported % | jammed pairs % | distinct % "
             "| guards | one lead sentence R-1 | rare-word recall % |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]

    def cell(figure: dict[str, Any]) -> str:
        return f"{figure['mean']:.2f}" + (f" ± {figure['sd']:.2f}" if figure["sd"] is not None else "")

    limits = Guards(**guards)
    for name, model in results["models"].items():
        for setting, f in model["settings"].items():
            label = f"**{setting}**" if results["chosen"].get(name) == setting else setting
            verdict = "pass" if limits.passes(f, ref) else "fail"
            lines.append(f"| {name} | {label} | {cell(f['rouge1'])} | {cell(f['rouge2'])} | {cell(f['rougeL'])} | "
                         f"{f['mean_words']['mean']:.1f} | {f['fragment_rate']['mean']:.1f} | "
                         f"{f['sentences_mean']['mean']:.2f} | {f['more_sentences_than_reference']['mean']:.1f} | "
                         f"{f['adjacent_repeat']['mean']:.1f} | {f['repeated_words']['mean']:.1f} | "
                         f"{_unsupported(f)} | {_later_figure(f, 'jammed_pairs')} | "
                         f"{f['distinct']['mean']:.1f} | {verdict} | {model['lead1_rouge1']:.2f} | "
                         f"{_later_figure(f, 'rare_word_recall')} |")
    shared = results["chosen"].get("all models")
    lines += ["", f"For every model at once (params.yaml's one `decode:`): **{shared}**." if shared
              else "No setting passes the guards for every model."]
    return "\n".join(lines) + "\n"
