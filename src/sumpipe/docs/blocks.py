"""The renderers of the generated blocks (`sumpipe.docs.generated`): one small function per block name.

Each takes the project's `Sources` (its params.yaml, `metrics/*.json` and the registries) and returns
Markdown. A figure comes only from `metrics/`, a name only from params.yaml or a registry's shipped
entries (`builtin`, so an entry a test registers never shows), so a changed metric or a new registry
line changes the text, and `sumpipe docs --check` (and tests/docs/test_generated.py) fails until
the docs are regenerated. Where each block is used:

| block | file | from |
|---|---|---|
| `summary` | README.md | metrics/{rouge,rare_words}.json: the models, the best ensemble, Lead-1, Lead-3, the oracle |
| `results` | docs/results.md | metrics/{rouge,rare_words,abstractiveness}.json; params.yaml's systems, baselines |
| `read-quality` | docs/results.md | metrics/read_quality.json (what a reader gets, the references' row first) |
| `comparisons` | docs/results.md | metrics/comparisons.json (the seed-aware tests) |
| `rare-words` | docs/results.md | metrics/{rare_words,copy_rate,comparisons}.json (recall, ceiling, copy rate) |
| `extractive-results` | docs/extractive.md | metrics/rouge.json of `extractive.systems` |
| `crosseval` | docs/datasets.md | metrics/crosseval.json |
| `numerals` | docs/numerals.md, experiments/numerals/README.md | experiments/numerals/reports/numerals.json |
| `measures` | docs/measures.md, experiments/measures/README.md | experiments/measures/results/meta_eval.json |
| `realtext-gigaword` | docs/realtext.md, experiments/gigaword/README.md | its metrics/{rouge,crosseval,rare_words} |
| `realtext-cnn` | docs/realtext.md, experiments/cnn/README.md | its metrics/{rouge,rare_words,coverage} |
| `extractive-methods` | docs/extractive.md | the extractive-method registry (class flags, docstrings) |
| `datasets` | docs/datasets.md | the data-set registry (options dataclasses, lengths) |
| `comparison` | docs/usage.md | docs/comparison.txt, the transcript docs/comparison.sh records (real DVC output) |
| `comparison-result` | README.md | the `sumpipe compare` part of docs/comparison.txt |
| `decode` | docs/usage.md | docs/decode.txt, the transcript docs/decode.sh records (the built models' real output) |
| `decode-example` | README.md | the first command of docs/decode.txt (one docstring, the default model) |
| `families` | docs/models.md | the model-family registry, the models of params.yaml and params-paper.yaml |

A table's format lives in its one function: the README's table is `summary_table`, the full results
table `results_table`.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sumpipe.config import Params, load_params
from sumpipe.errors import SumpipeError

PAPER_PARAMS = "params-paper.yaml"


@dataclass
class Sources:
    """What the blocks are made of: the project folder `root` (paths in `params` are relative to it)."""

    root: Path
    params: Params
    _metrics: dict[str, Any] = field(default_factory=dict, repr=False)

    def metrics(self, name: str) -> dict[str, Any]:
        """`<paths.metrics>/<name>.json` (read once)."""
        if name not in self._metrics:
            path = self.root / self.params.paths.metrics / f"{name}.json"
            if not path.is_file():
                raise SumpipeError(f"{path}: not found (the generated blocks are made from `dvc repro`'s metrics)")
            self._metrics[name] = json.loads(path.read_text(encoding="utf-8"))
        return self._metrics[name]

    def paper_params(self) -> Params | None:
        path = self.root / PAPER_PARAMS
        return load_params(path) if path.is_file() else None


BLOCKS: dict[str, Callable[[Sources], str]] = {}


def block(name: str) -> Callable[[Callable[[Sources], str]], Callable[[Sources], str]]:
    """Register the decorated function as the renderer of block `name`."""
    def register(render: Callable[[Sources], str]) -> Callable[[Sources], str]:
        BLOCKS[name] = render
        return render
    return register


# --------------------------------------------------------------------------------------------
# Cells and tables
# --------------------------------------------------------------------------------------------
MISSING = "–"


def with_interval(entry: dict[str, Any] | None, key: str) -> str:
    """`22.68 ± 0.58 [20.95, 24.41]`: a mean, the sd over training seeds when there are several
    (`<key>_sd`), and its bootstrap interval (`<key>_low`, `<key>_high`)."""
    if not entry or key not in entry:
        return MISSING
    sd = f" ± {entry[key + '_sd']:.2f}" if f"{key}_sd" in entry else ""
    return f"{entry[key]:.2f}{sd} [{entry[key + '_low']:.2f}, {entry[key + '_high']:.2f}]"


def with_sd(entry: dict[str, Any] | None, key: str, digits: int = 2) -> str:
    """`4.50 ± 0.31`: a mean and, over several training seeds, its sd (missing or null: "–")."""
    if not entry or entry.get(key) is None:
        return MISSING
    sd = entry.get(f"{key}_sd")  # null where a seed's figure is undefined (no word outside the vocabulary)
    return f"{entry[key]:.{digits}f}" + (f" ± {sd:.{digits}f}" if sd is not None else "")


def figure(entry: dict[str, Any] | None, key: str, digits: int = 2) -> str:
    return MISSING if not entry or key not in entry else f"{entry[key]:.{digits}f}"


def table(header: list[str], rows: list[list[str]], right: int = 0) -> str:
    """A pipe table; the last `right` columns right-aligned."""
    align = ["---"] * (len(header) - right) + ["---:"] * right
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |" for line in lines)


def _reads_reference(method: str) -> bool:
    from sumpipe.extractive.methods import METHODS

    return method in METHODS.builtin and METHODS.get(method, "method").uses_reference


def systems(params: Params) -> list[tuple[str, str]]:
    """(name in metrics, what it reads) of every evaluated system, in params.yaml's order: the models, the
    ensembles of their seeds, the extractive systems, the Lead-k baseline and the first-N baselines."""
    from sumpipe.selection.methods import baseline_selections, find_selection

    n = params.extractive.sentences
    rows = [(name, spec.input or "whole text") for name, spec in params.models.items()]
    rows += [(name, params.models[spec.model].input or "whole text") for name, spec in params.ensembles.items()]
    rows += [(name, f"{n} sentence{'s' if n != 1 else ''}" if n else f"{params.extractive.tokens} tokens")
             for name in params.extractive.systems if name not in params.models]
    k = params.evaluate.lead_sentences
    rows.append((f"lead{k}", f"first {k} sentences"))
    budgets = params.extract.budgets
    rows += [(name, f"first {find_selection(name, budgets).tokens} tokens") for name in baseline_selections(budgets)]
    return rows


def label(name: str, params: Params) -> str:
    """A system as the tables name it: `PG-cov (rnn)`, `PG-cov-ens (ensemble of 3 PG-cov seeds)`, `oracle ‡`
    (reads the reference)."""
    if name in params.models:
        return f"{name} ({params.models[name].family})"
    if name in params.ensembles:  # one system: its figures are the ensemble's, not a mean over seeds
        return f"{name} (ensemble of {len(params.ensemble_seeds(name))} {params.ensembles[name].model} seeds)"
    return f"{name} ‡" if _reads_reference(name) else name


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
@block("results")
def results_table(src: Sources) -> str:
    """docs/results.md: every system's test ROUGE (a model's: mean ± sd over its seeds; R-1 with its interval),
    rare-word recall, length in words, distinct summaries and summaries with a word twice in a row."""
    rouge, rare, abstractive = src.metrics("rouge"), src.metrics("rare_words"), src.metrics("abstractiveness")
    rows = []
    for name, reads in systems(src.params):
        if name not in rouge:
            continue
        r, a = rouge[name], abstractive.get(name)
        rows.append([label(name, src.params), reads, str(r.get("n_seeds", 1)), with_interval(r, "rouge1"),
                     with_sd(r, "rouge2"), with_sd(r, "rougeL"), with_interval(rare.get(name), "recall"),
                     figure(a, "mean_words", 1), figure(a, "distinct", 1), figure(a, "adjacent_repeat", 1)])
    return table(["system", "reads", "seeds", "R-1", "R-2", "R-L", "rare-word recall", "words", "distinct %",
                  "twice %"], rows, right=3)


PAPERS = {"transformer": "Morozovskii 2022", "rnn": "See et al. 2017", "bert2stage": "Roy Choudhury 2020"}


def _sentences(n: int) -> str:
    return "sentence" if n == 1 else f"{n} sentences"


def summary_rows(src: Sources) -> list[tuple[str, str, str]]:
    """(name in metrics, as the README names it, what it is) of the README's systems that were evaluated:
    every model of params.yaml, the ensemble with the best R-1, the extractive `lead` (Lead-k, k =
    `extractive.sentences`), the Lead-k baseline (`evaluate.lead_sentences`) and the oracle."""
    params, rouge = src.params, src.metrics("rouge")
    rows = []
    for name, spec in params.models.items():
        seeds = len(params.seeds_of(name))
        what = f"{spec.family} family" + (", rarity-scaled attention" if spec.rarity else "")
        paper = f" ({PAPERS[spec.family]})" if spec.family in PAPERS else ""
        rows.append((name, name, f"{what}{paper}, {seeds} seed{'s' if seeds != 1 else ''}"))
    ensembles = [name for name in params.ensembles if name in rouge]
    if ensembles:
        best = max(ensembles, key=lambda name: rouge[name]["rouge1"])
        model = params.ensembles[best].model
        rows.append((best, best, f"{model}'s {len(params.ensemble_seeds(best))} seeds as one summarizer "
                                 "(the best ensemble)"))
    n = params.extractive.sentences
    if "lead" in params.extractive.systems and n:
        rows.append(("lead", f"lead (Lead-{n})", f"the first {_sentences(n)}"))
    k = params.evaluate.lead_sentences
    rows.append((f"lead{k}", f"lead{k} (Lead-{k})", f"the first {_sentences(k)}"))
    if "oracle" in params.extractive.systems:
        budget = _sentences(n) if n else f"{params.extractive.tokens} tokens"
        rows.append(("oracle", label("oracle", params), f"the {budget} closest to the reference by ROUGE "
                                                         "(an upper bound)"))
    return [row for row in rows if row[0] in rouge]


@block("summary")
def summary_table(src: Sources) -> str:
    """README: the one table a newcomer reads (`summary_rows`): R-1, R-2, R-L and rare-word recall (a model's:
    mean ± sd over its seeds), and a line saying what the figures are. Every system, with intervals, is the
    `results` block (docs/results.md)."""
    rouge, rare = src.metrics("rouge"), src.metrics("rare_words")
    rows = [[shown, what, *(with_sd(rouge[name], key) for key in ("rouge1", "rouge2", "rougeL")),
             with_sd(rare.get(name), "recall")] for name, shown, what in summary_rows(src)]
    documents = max((entry.get("n", 0) for entry in rouge.values()), default=0)
    return (table(["system", "what it is", "R-1", "R-2", "R-L", "rare-word recall"], rows, right=4)
            + f"\n\nTest split ({documents:,} documents), F1 × 100; a model's figures are the mean ± sd over its "
              f"training seeds.\nRare-word recall: % of the reference's rare words (seen at most "
              f"{src.params.evaluate.rare_word_max_count} times in training)\nthat the summary contains. "
              "‡ reads the reference.")


@block("read-quality")
def read_quality_table(src: Sources) -> str:
    """docs/results.md: what a reader gets (evaluate's `read_quality`): fragments, sentences, repeated words,
    unsupported words (and numbers, names), jammed pairs, per system (a model's: mean ± sd over its seeds),
    the references' own figures first as the anchor."""
    path = src.root / src.params.paths.metrics / "read_quality.json"
    if not path.is_file():  # made by an evaluate stage newer than the checkout's last run
        return ("*Not in this checkout's metrics yet: `dvc repro evaluate` writes `metrics/read_quality.json`, "
                "then `sumpipe docs` fills this table.*")
    reading = src.metrics("read_quality")
    # the faithfulness column: the stems' figure, or in metrics an older evaluate stage wrote, the tokens' one
    # it replaced (docs/measures.md), until `dvc repro evaluate` writes the new one
    unsupported = "unsupported_stems" if "unsupported_stems" in (reading.get("references") or {}) else \
        "unsupported_words"

    def row(name: str, entry: dict[str, Any] | None) -> list[str]:
        return [name, with_sd(entry, "fragment_rate", 1), with_sd(entry, "sentences_mean"),
                with_sd(entry, "more_sentences_than_reference", 1), with_sd(entry, "repeated_words", 1),
                with_sd(entry, unsupported, 1), with_sd(entry, "unsupported_numbers", 1),
                with_sd(entry, "unsupported_names", 1), with_sd(entry, "jammed_pairs", 1)]

    systems_ = reading.get("systems", {})
    rows = [row("*references*", reading.get("references"))]
    rows += [row(label(name, src.params), systems_[name]) for name, _ in systems(src.params) if name in systems_]
    return table(["system", "fragments %", "sentences", "more than ref. %", "repeated words %", "unsupported %",
                  "numbers %", "names %", "jammed pairs %"], rows, right=8)


@block("rare-words")
def rare_words_table(src: Sources) -> str:
    """docs/results.md: does a model write the rare words? Per system rare-word recall, its ceiling (the
    recall of the model's own input), the copy rate (% of summary tokens outside the output vocabulary of V
    words; a system without a word vocabulary of its own is measured against the transformer's, marked *),
    the share of those tokens the source holds (copied, not written), the references' figures first as the
    anchor; then the seed-aware differences in rare-word recall
    between two trained systems (M2 - M1)."""
    rare = src.metrics("rare_words")
    path = src.root / src.params.paths.metrics / "copy_rate.json"
    copying = src.metrics("copy_rate") if path.is_file() else {}
    rates = copying.get("systems", {})

    def size(entry: dict[str, Any] | None) -> str:
        if not entry:
            return MISSING
        return f"{entry['vocab_size']:,}" + ("" if entry.get("own_vocabulary", True) else " *")

    rows = []
    if copying:
        rows.append(["*references*", MISSING, MISSING, MISSING, with_sd(copying["references"], "copy_rate"),
                     with_sd(copying["references"], "in_source", 1), size(copying["references"])])
    for name, _ in systems(src.params):
        entry = rare.get(name)
        if entry is None:
            continue
        ceiling = f"{entry['ceiling']:.2f} ({entry['input']})" if "ceiling" in entry else MISSING
        rows.append([label(name, src.params), str(entry.get("n_seeds", 1)), with_interval(entry, "recall"), ceiling,
                     with_sd(rates.get(name), "copy_rate"), with_sd(rates.get(name), "in_source", 1),
                     size(rates.get(name))])
    text = table(["system", "seeds", "rare-word recall", "ceiling (input)", "copy rate %", "in source %", "V"], rows,
                 right=3)
    if not copying:
        text += ("\n\n*Copy rates: not in this checkout's metrics yet: `dvc repro evaluate` writes "
                 "`metrics/copy_rate.json`, then `sumpipe docs` fills them in.*")
    else:
        text += "\n\n\\* the transformer's output vocabulary (the system has no word vocabulary of its own)."
    trained = set(src.params.models) | set(src.params.ensembles)
    for c in src.metrics("comparisons").values():
        d = c.get("rare_word_recall")
        if d and c["a"] in trained and c["b"] in trained:
            text += (f"\n\n{c['a']} − {c['b']} ({c['what']}): {d['delta']:+.2f} rare-word recall "
                     f"[{d['low']:+.2f}, {d['high']:+.2f}], p = {d['p_value']:.3f} (two-level bootstrap, "
                     f"{c['seeds_a']}/{c['seeds_b']} seeds).")
    return text


@block("comparisons")
def comparisons_table(src: Sources) -> str:
    """docs/results.md: the evaluate stage's seed-aware comparisons (metrics/comparisons.json): every difference
    the results discuss, with its two-level bootstrap interval and p."""
    rows = []
    for c in src.metrics("comparisons").values():
        cells = [f"{c[t]['delta']:+.2f} [{c[t]['low']:+.2f}, {c[t]['high']:+.2f}] ({c[t]['p_value']:.3f})"
                 for t in ("rouge1", "rougeL")]
        rows.append([c["a"], c["b"], c["what"], *cells, f"{c['seeds_a']}/{c['seeds_b']}"])
    return table(["A", "B", "what", "Δ R-1 [95%] (p)", "Δ R-L [95%] (p)", "seeds"], rows, right=3)


@block("extractive-results")
def extractive_results(src: Sources) -> str:
    """docs/extractive.md: the extractive systems' R-1, R-2, R-L with intervals."""
    rouge = src.metrics("rouge")
    rows = [[label(name, src.params), *(with_interval(rouge[name], key) for key in ("rouge1", "rouge2", "rougeL"))]
            for name in src.params.extractive.systems if name in rouge]
    return table(["system", "R-1", "R-2", "R-L"], rows)


@block("crosseval")
def crosseval_table(src: Sources) -> str:
    """docs/datasets.md: the crosseval stage's models on its corpus (`crosseval.name`)."""
    scores = src.metrics("crosseval")
    rows = [[name, str(entry.get("n", MISSING)), *(with_interval(entry, key) for key in ("rouge1", "rouge2", "rougeL")),
             figure(entry, "distinct", 1)] for name, entry in scores.items()]
    return table(["model (corpus)", "n", "R-1", "R-2", "R-L", "distinct %"], rows, right=1)


NUMERALS = Path("experiments") / "numerals"


@block("numerals")
def numerals_table(src: Sources) -> str:
    """docs/numerals.md and experiments/numerals/README.md: the numerals experiment's table
    (`reports/numerals.json` of its pipeline, in the report's own format,
    `sumpipe.studies.numerals_report.markdown_table`)."""
    from sumpipe.config import load_config
    from sumpipe.studies.numerals import NumeralsExperiment
    from sumpipe.studies.numerals_report import markdown_table

    cfg = load_config(src.root / NUMERALS / "params.yaml", NumeralsExperiment)
    path = src.root / NUMERALS / cfg.reports / "numerals.json"
    if not path.is_file():
        raise SumpipeError(f"{path}: not found (`dvc repro {NUMERALS / 'dvc.yaml'}` writes it)")
    flat = json.loads(path.read_text(encoding="utf-8"))
    metrics = {run: {length: flat[f"{run}-{length}"] for length in cfg.max_lengths} for run in cfg.runs}
    return markdown_table(metrics, cfg.max_lengths).strip()


MEASURES = Path("experiments") / "measures"


@block("measures")
def measures_table(src: Sources) -> str:
    """docs/measures.md and experiments/measures/README.md: the meta-evaluation's tables
    (`results/meta_eval.json` of `sumpipe meta-eval` in experiments/measures,
    `sumpipe.evaluate.meta_eval.markdown_table`): every measure against every human
    score, with the published rows beside. The judgments stay outside the project, so the results are
    committed and this block reads them, never the judgments."""
    from sumpipe.config import load_config
    from sumpipe.evaluate.meta_eval import RESULTS_JSON, MetaEvaluation, markdown_table

    cfg = load_config(src.root / MEASURES / "params.yaml", MetaEvaluation)
    path = src.root / MEASURES / cfg.out / RESULTS_JSON
    if not path.is_file():
        raise SumpipeError(f"{path}: not found (`cd {MEASURES} && sumpipe meta-eval` writes it)")
    return markdown_table(json.loads(path.read_text(encoding="utf-8")))


# --------------------------------------------------------------------------------------------
# The real-text experiments: their metrics beside the thesis's published figures
# --------------------------------------------------------------------------------------------
EXPERIMENTS = Path("experiments")
# Published F1 x 100 (R-1, R-2, R-L) the experiments are compared with; SEEDS.md §1.8 (Morozovskii 2022):
# Table 5.15 (Gigaword, trained on 3,803,957 pairs), Table 5.22 (DUC 2004, M1 trained on Gigaword), Table
# 5.1 (CNN/DM, 286,817 stories, 5 epochs); Rush et al. 2015's prefix on DUC 2004 (recall at 75 bytes) and
# See et al. 2017's Lead-3 on CNN/DM.
THESIS_GIGAWORD = {"M1": (33.09, 15.64, 31.14), "M2": (32.31, 14.68, 30.49)}
THESIS_DUC2004 = {"M1": (26.35, 9.23, 24.50), "prefix75": (22.43, 6.49, 19.65)}
THESIS_CNN = {"M1": (35.56, 12.90, 33.08), "M2": (35.59, 12.51, 33.22), "M1-200": (35.36, 12.65, 32.82),
              "M2-200": (35.09, 11.98, 32.62), "M1-400": (36.29, 13.24, 33.90), "M2-400": (35.83, 13.09, 33.48),
              "lead3": (40.34, 17.70, 36.57)}
TYPES = ("rouge1", "rouge2", "rougeL")


def _experiment_metrics(src: Sources, name: str, files: tuple[str, ...]) -> tuple[Params, dict[str, dict]] | None:
    """experiments/<name>'s params and its metrics files (by name), or None where it has not been run."""
    params = load_params(src.root / EXPERIMENTS / name / "params.yaml")
    folder = src.root / EXPERIMENTS / name / params.paths.metrics
    if not all((folder / f"{file}.json").is_file() for file in files):
        return None
    return params, {file: json.loads((folder / f"{file}.json").read_text(encoding="utf-8")) for file in files}


def _not_run(name: str) -> str:
    return (f"*Not run in this checkout yet: `cd experiments/{name} && dvc repro` writes "
            f"`experiments/{name}/metrics/`, then `sumpipe docs` fills this table.*")


def _seeded(entry: dict[str, Any] | None, key: str, intervals: bool = False) -> str:
    """A figure with its sd over seeds (and its interval), as the report's tables show it."""
    from sumpipe.evaluate.summary import cell

    return MISSING if not entry or key not in entry else cell(entry, key, intervals)


def _published(figures: tuple[float, float, float] | None) -> str:
    return MISSING if figures is None else " / ".join(f"{x:.2f}" for x in figures)


@block("realtext-gigaword")
def realtext_gigaword(src: Sources) -> str:
    """docs/realtext.md and experiments/gigaword/README.md: the headline models, their ensembles and the
    baselines on the Gigaword test pairs (F1) and on DUC 2003 under the DUC protocol (recall at 75 bytes,
    averaged over the four references), with rare-word recall on both (DUC: of the 75 bytes scored), beside
    the thesis's."""
    found = _experiment_metrics(src, "gigaword", ("rouge", "crosseval", "rare_words"))
    if found is None:
        return _not_run("gigaword")
    params, metrics = found
    rouge, cross, rare = metrics["rouge"], metrics["crosseval"], metrics["rare_words"]
    corpus = params.crosseval.name
    names = [*params.models, *params.ensembles, f"lead{params.evaluate.lead_sentences}",
             *(f"prefix{b}" for b in params.evaluate.prefix_bytes),
             *(n for n in rouge if n.startswith("first"))]
    rows = []
    for name in names:
        test, duc = rouge.get(name), cross.get(f"{name} ({corpus})")
        rows.append([label(name, params), _seeded(test, "rouge1", intervals=True),
                     *(_seeded(test, key) for key in TYPES[1:]), _seeded(rare.get(name), "recall"),
                     _seeded(duc, "rouge1_recall", intervals=True),
                     *(_seeded(duc, f"{key}_recall") for key in TYPES[1:]), _seeded(duc, "rare_word_recall"),
                     _published(THESIS_GIGAWORD.get(name)), _published(THESIS_DUC2004.get(name))])
    return table(["system", "Gigaword R-1 (F1)", "R-2", "R-L", "rare words", f"{corpus} R-1 (recall)", "R-2", "R-L",
                  "rare words", "thesis Gigaword (F1)", "published DUC 2004"], rows)


@block("realtext-cnn")
def realtext_cnn(src: Sources) -> str:
    """docs/realtext.md and experiments/cnn/README.md: the models, Lead-3, the extractive systems and the
    oracle on the CNN test stories (F1, rare-word recall), beside the thesis's Table 5.1, and how often each
    selection binds and differs from the first tokens."""
    found = _experiment_metrics(src, "cnn", ("rouge", "rare_words", "coverage"))
    if found is None:
        return _not_run("cnn")
    params, metrics = found
    rouge, rare, coverage = metrics["rouge"], metrics["rare_words"], metrics["coverage"].get("test", {})
    rows = []
    for name, reads in systems(params):
        if name in rouge:
            rows.append([label(name, params), reads, _seeded(rouge[name], "rouge1", intervals=True),
                         *(_seeded(rouge[name], key) for key in TYPES[1:]),
                         _seeded(rare.get(name), "recall"), _published(THESIS_CNN.get(name))])
    scores = table(["system", "reads", "R-1", "R-2", "R-L", "rare-word recall", "thesis (Table 5.1)"], rows)
    budgets = [f"{b.method}{b.tokens}" for b in params.extract.budgets]
    inputs = [[f"`{name}`", figure(coverage.get(name), "share", 3), figure(coverage.get(name), "binds", 3),
               figure(coverage.get(name), "differs", 3)] for name in budgets if name in coverage]
    selections = table(["input", "reference words present (share)", "binds", "differs"], inputs, right=3)
    return f"{scores}\n\nThe models' inputs on the {coverage.get('examples', MISSING)} test stories:\n\n{selections}"


# --------------------------------------------------------------------------------------------
# Registries
# --------------------------------------------------------------------------------------------
def _first_paragraph(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def _module_docstring(module: str) -> str:
    """A module's docstring, read from its file (nothing is imported: a model family imports torch)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    return ast.get_docstring(ast.parse(Path(spec.origin).read_text(encoding="utf-8"))) or ""


def _source_path(module: str) -> str:
    return ("src/" if module.startswith("sumpipe.") else "") + module.replace(".", "/") + ".py"


def _reads(method: Any) -> str:
    reads = []
    if method.uses_reference:
        reads.append("the reference")
    if method.uses_corpus:
        reads.append("corpus statistics (`extractive-fit`)")
    if method.needs == "ngrams":
        reads.append("the vocab stage's 3-gram table")
    elif method.needs == "space":
        reads.append("the collection LSA space (`extractive-fit`)")
    if not method.uses_terms:
        reads.append("positions only")
    return ", ".join(reads) or "the document"


@block("extractive-methods")
def extractive_methods(src: Sources) -> str:
    """docs/extractive.md: every shipped extractive method, what it does and reads, and whether it can
    feed a model (`sumpipe.selection.methods.selectable`)."""
    from sumpipe.extractive.methods import METHODS
    from sumpipe.selection.methods import selectable

    rows = []
    for name in sorted(METHODS.builtin):
        method = METHODS.get(name, "method")
        doc = method.__dict__.get("__doc__") or _module_docstring(method.__module__)
        rows.append([f"`{name}`", _first_paragraph(doc), _reads(method),
                     f"yes (`{name}<N>`)" if selectable(method) else "no: a system only"])
    return table(["method", "what it does", "reads", "model input"], rows)


def _options(options: type) -> str:
    fields = dataclasses.fields(options)
    if not fields:
        return "none"
    shown = []
    for f in fields:
        value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        value = "[" + ", ".join(map(str, value)) + "]" if isinstance(value, list) else value
        shown.append(f"`{f.name}` ({'null' if value is None else value})")
    return ", ".join(shown)


def _decode_cap(lengths: Any) -> str:
    if lengths.max_summary:
        return f"{lengths.max_summary} words"
    if lengths.longest_reference:
        return f"1.2 x min(the model's summary length, {lengths.longest_reference})"
    return "1.2 x the model's summary length"


@block("datasets")
def datasets_table(src: Sources) -> str:
    """docs/datasets.md: every shipped data set, its loader, its options (`data.options.<name>`,
    defaults) and its summary-length cap for decoding."""
    from sumpipe.data.datasets import DATASETS

    rows = []
    for name in sorted(DATASETS.builtin):
        dataset = DATASETS.get(name, "data.dataset")
        module = DATASETS.builtin[name]
        rows.append([f"`{name}`", _first_paragraph(_module_docstring(module)), f"`{_source_path(module)}`",
                     _options(dataset.options), _decode_cap(dataset.lengths)])
    return table(["`data.dataset`", "what it is", "loader", "options (defaults)", "decode cap"], rows)


@block("families")
def families_table(src: Sources) -> str:
    """docs/models.md: every shipped model family, its module and the models params.yaml (and
    params-paper.yaml) name for it."""
    from sumpipe.models.registry import FAMILIES

    paper = src.paper_params()
    rows = []
    for name in sorted(FAMILIES.builtin):
        module = FAMILIES.builtin[name]

        def models(params: Params | None, family: str = name) -> str:
            names = [m for m, spec in (params.models.items() if params else []) if spec.family == family]
            return ", ".join(names) or MISSING

        rows.append([f"`{name}`", _first_paragraph(_module_docstring(module)), f"`{_source_path(module)}`",
                     models(src.params), models(paper)])
    return table(["family", "what it is", "module", "params.yaml", PAPER_PARAMS], rows)


def sources(root: Path, params_file: Path) -> Sources:
    """The sources of the project in `root` with its params file."""
    return Sources(root, load_params(params_file))


def render(src: Sources) -> Callable[[str], str]:
    """Block name -> its text for `src` (`sumpipe.docs.generated`'s renderer)."""
    return lambda name: BLOCKS[name](src)


COMPARISON_TRANSCRIPT = "docs/comparison.txt"
DECODE_TRANSCRIPT = "docs/decode.txt"


def _transcript(src: Sources, name: str) -> str:
    """A recorded transcript (docs/<x>.txt, written by docs/<x>.sh) as a console block, verbatim."""
    path = src.root / name
    if not path.is_file():
        raise SumpipeError(f"{path}: not found ({Path(name).with_suffix('.sh')} records it)")
    return "```console\n" + path.read_text(encoding="utf-8").rstrip("\n") + "\n```"


@block("comparison")
def comparison(src: Sources) -> str:
    """The README's comparison transcript: `dvc exp run -S`, `dvc exp show`, `sumpipe compare` and `dvc params
    diff` as a user runs them, recorded by docs/comparison.sh (an experiment costs minutes: no renderer runs
    one) into docs/comparison.txt and copied here verbatim; tests/docs/test_blocks.py checks that the
    transcript's baseline R-1 figures are metrics/headline.json's, so a changed result asks for a new one."""
    return _transcript(src, COMPARISON_TRANSCRIPT)


@block("decode")
def decode(src: Sources) -> str:
    """The README's decode transcript: `sumpipe decode` on a docstring (the default model, BERT2S, an
    ensemble) and on a news story (the domain note), recorded by docs/decode.sh with the built models into
    docs/decode.txt and copied here verbatim; tests/docs/test_blocks.py checks that the ROUGE figures its
    notes quote are metrics/rouge.json's, so a changed result asks for a new one."""
    return _transcript(src, DECODE_TRANSCRIPT)


@block("decode-example")
def decode_example(src: Sources) -> str:
    """The README's short decode example: docs/decode.txt up to its second `sumpipe decode` command (the
    first text and the default model's answer), verbatim; the whole transcript is the `decode` block."""
    lines = _transcript(src, DECODE_TRANSCRIPT).split("\n")
    commands = [i for i, line in enumerate(lines) if line.startswith("$ sumpipe decode")]
    return "\n".join(lines[:commands[1]] + ["```"]) if len(commands) > 1 else "\n".join(lines)


@block("comparison-result")
def comparison_result(src: Sources) -> str:
    """The README's short comparison example: the `sumpipe compare` command of docs/comparison.txt and its
    output, up to the next command, verbatim; the whole transcript is the `comparison` block."""
    lines = _transcript(src, COMPARISON_TRANSCRIPT).split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("$ sumpipe compare")), None)
    if start is None:
        raise SumpipeError(f"{COMPARISON_TRANSCRIPT}: has no `sumpipe compare` command (docs/comparison.sh)")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("$ ")), len(lines) - 1)
    return "\n".join(["```console", *lines[start:end]]).rstrip("\n") + "\n```"
