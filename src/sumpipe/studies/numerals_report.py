"""Hansen & Petersen 2019's numerals figures and a table from the runs' metrics.

    <out>/<run>-<L>/metrics.json (every run × max length) ─► <reports>/figures/fig5_accuracy_no_attention.png
                                                             <reports>/figures/fig6_loss_no_attention.png
                                                             <reports>/figures/fig7_accuracy_attention.png
                                                             <reports>/figures/fig8_loss_attention.png
                                                             <reports>/numerals.md, <reports>/numerals.json
                                                             <reports>/headline.json (the DVC metrics)

Figs. 5-6: the non-attentional model on continuous and random data (validation accuracy, training
loss) by maximum sequence length; Figs. 7-8: random data without and with attention. A figure whose
runs are not in params.yaml's `runs` is left out. `headline.json`, the pipeline's only DVC metrics:
each cell's validation token accuracy x 100, `{"accuracy": {"<run>-<L>": ..}}`, a column each in `dvc exp show`;
the rest of each cell's figures are `numerals.json`'s, a plain output in git.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sumpipe.studies.numerals import METRICS_FILE, NumeralsExperiment

FIGURES = (  # file, metric, y label, the runs compared, title
    ("fig5_accuracy_no_attention.png", "valid_token_accuracy", "validation token accuracy",
     ("continuous-none", "random-none"),
     "No attention: continuous vs random sequences (Hansen & Petersen 2019 Fig. 5)"),
    ("fig6_loss_no_attention.png", "train_loss", "training loss (last epoch)",
     ("continuous-none", "random-none"),
     "No attention: continuous vs random sequences (Hansen & Petersen 2019 Fig. 6)"),
    ("fig7_accuracy_attention.png", "valid_token_accuracy", "validation token accuracy",
     ("random-none", "random-bahdanau"),
     "Random sequences: no attention vs attention (Hansen & Petersen 2019 Fig. 7)"),
    ("fig8_loss_attention.png", "train_loss", "training loss (last epoch)",
     ("random-none", "random-bahdanau"),
     "Random sequences: no attention vs attention (Hansen & Petersen 2019 Fig. 8)"),
)
LABELS = {"continuous-none": "continuous, no attention", "random-none": "random, no attention",
          "random-bahdanau": "random, Bahdanau attention", "continuous-bahdanau": "continuous, Bahdanau attention"}


def collect_metrics(cfg: NumeralsExperiment) -> dict[str, dict[int, dict[str, Any]]]:
    """{run: {max length: metrics}} for every run × length of params.yaml (a missing file is an error)."""
    from sumpipe.errors import SumpipeError
    from sumpipe.io.atomic import read_json

    out: dict[str, dict[int, dict[str, Any]]] = {}
    for run in cfg.runs:
        for length in cfg.max_lengths:
            path = cfg.run_dir(run, length) / METRICS_FILE
            if not path.is_file():
                raise SumpipeError(f"{path}: missing; run `sumpipe numerals run --run {run} --length {length}` first")
            out.setdefault(run, {})[length] = read_json(path)
    return out


def markdown_table(metrics: dict[str, dict[int, dict[str, Any]]], lengths: list[int]) -> str:
    """Rows = max length; per run: token accuracy % (sequence accuracy %) and the training loss."""
    runs = list(metrics)
    head = "| max length | " + " | ".join(f"{LABELS[r]}: token acc. (seq.) / loss" for r in runs) + " |"
    rule = "|---:|" + "---:|" * len(runs)
    rows = []
    for length in lengths:
        cells = []
        for run in runs:
            m = metrics[run][length]
            cells.append(f"{100 * m['valid_token_accuracy']:.1f} % ({100 * m['valid_sequence_accuracy']:.1f} %)"
                         f" / {m['train_loss']:.3f}")
        rows.append(f"| {length} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows]) + "\n"


def plot(metrics: dict[str, dict[int, dict[str, Any]]], metric: str, ylabel: str, runs: tuple[str, ...],
         title: str, path: Path) -> Path:
    """One line per run: `metric` against the maximum sequence length; written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sumpipe.io.atomic import atomic_path

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for run in runs:
        lengths = sorted(metrics[run])
        ax.plot(lengths, [metrics[run][n][metric] for n in lengths], marker="o", label=LABELS[run])
    ax.set_xlabel("maximum sequence length")
    ax.set_ylabel(ylabel)
    if metric.endswith("accuracy"):
        ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def numerals_report(cfg: NumeralsExperiment) -> list[Path]:
    """Write the figures whose runs exist, the markdown table and the combined metrics; return the paths."""
    from sumpipe.io.atomic import write_json, write_text

    metrics = collect_metrics(cfg)
    reports = Path(cfg.reports)
    written = [plot(metrics, metric, ylabel, runs, title, reports / "figures" / name)
               for name, metric, ylabel, runs, title in FIGURES if all(r in metrics for r in runs)]
    table = markdown_table(metrics, cfg.max_lengths)
    intro = ("# Numerals: attention vs none by maximum sequence length (Hansen & Petersen 2019)\n\n"
             f"{cfg.data.size} examples per data set ({cfg.data.train_fraction:.0%} train), GRU "
             f"{cfg.model.embedding_dim}/{cfg.model.hidden_dim}, {cfg.train.optimizer} lr {cfg.train.lr}, "
             f"batch {cfg.train.batch_size}, {cfg.train.epochs} epochs. Validation token accuracy of greedy "
             "decoding (sequence accuracy in brackets) / training loss per token of the last epoch.\n\n")
    written.append(write_text(intro + table, reports / "numerals.md"))
    flat = {f"{run}-{length}": m for run, by_length in metrics.items() for length, m in by_length.items()}
    written.append(write_json(flat, reports / "numerals.json"))
    written.append(write_json(headline(flat), reports / HEADLINE_FILE, sort_keys=False))
    return written


HEADLINE_FILE = "headline.json"


def headline(cells: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The DVC metrics: each cell's (`<run>-<L>`) validation token accuracy x 100, 2 decimals, in run order."""
    return {"accuracy": {cell: round(100 * float(m["valid_token_accuracy"]), 2) for cell, m in cells.items()}}
