"""PNG figures for the report, drawn with matplotlib's Agg canvas (no display, no pyplot state).

Each function takes plain data and an output path, writes the PNG atomically and returns the path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from sumpipe.io.atomic import atomic_path

if TYPE_CHECKING:
    import pandas as pd


def _save(fig: Figure, path: str | Path) -> Path:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    return Path(path)


def coverage_bars(coverage: dict[str, dict[str, dict[str, float]]], path: str | Path) -> Path:
    """Fig. 5.2 in aggregate: per split, mean share (and number) of reference words in each input.

    `coverage`: {split: {selection: {"share": .., "words_present": ..}}}.
    """
    splits = list(coverage)
    selections = sorted({s for per_split in coverage.values() for s in per_split},
                        key=lambda s: (s != "full", s))
    # two panels one above the other, 10 inches (1,100 pixels) wide like the other figures: side by side
    # and widened with the selections they overflowed the report's frame (2,106 pixels for nine)
    fig = Figure(figsize=(10, 6.4))
    ax_share, ax_words = fig.subplots(2, 1)
    width = 0.8 / max(1, len(splits))
    x = np.arange(len(selections))
    for k, split in enumerate(splits):
        shares = [coverage[split].get(s, {}).get("share", np.nan) for s in selections]
        words = [coverage[split].get(s, {}).get("words_present", np.nan) for s in selections]
        ax_share.bar(x + k * width, shares, width, label=split)
        ax_words.bar(x + k * width, words, width, label=split)
    for ax, title in ((ax_share, "share of reference words in the input"),
                      (ax_words, "reference words present (mean per example)")):
        ax.set_xticks(x + width * (len(splits) - 1) / 2, selections, rotation=30, ha="right")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8, ncol=len(splits), loc="upper right")
    ax_share.set_ylim(0, 1)
    return _save(fig, path)


def sentence_coverage(panels: dict[str, tuple[Sequence[int], Sequence[bool]]], path: str | Path) -> Path:
    """Fig. 5.2 for one example: reference words per source sentence, the selected ones highlighted.

    `panels`: {selection: (hits per sentence, selected per sentence)}.
    """
    fig = Figure(figsize=(8, 2.2 * len(panels) + 0.5))
    axes = np.atleast_1d(fig.subplots(len(panels), 1, squeeze=False)[:, 0])
    for ax, (name, (hits, selected)) in zip(axes, panels.items()):
        idx = np.arange(1, len(hits) + 1)
        colors = ["tab:blue" if s else "lightgray" for s in selected]
        ax.bar(idx, hits, color=colors)
        total = int(sum(h for h, s in zip(hits, selected) if s))
        ax.set_title(f"{name}: {total} reference words in the selected sentences", fontsize=10)
        ax.set_ylabel("words")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[-1].set_xlabel("sentence number (blue: in the input, gray: left out)")
    return _save(fig, path)


def attention_heatmap(attention: np.ndarray, source_tokens: Sequence[str], summary_tokens: Sequence[str],
                      path: str | Path, title: str, max_source: int = 80) -> Path:
    """Fig. 5.3: copy attention (T generated x S source), lighter = more attention.

    Only the first `max_source` source positions are drawn (the title says so when cut).
    """
    attention = np.asarray(attention, dtype=np.float32)
    shown = min(attention.shape[1], max_source, len(source_tokens))
    attention = attention[:, :shown]
    fig = Figure(figsize=(min(18.0, 2.0 + 0.16 * shown), min(12.0, 1.5 + 0.22 * len(summary_tokens))))
    ax = fig.subplots()
    image = ax.imshow(attention, aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_xticks(range(shown), list(source_tokens[:shown]), rotation=90, fontsize=6)
    ax.set_yticks(range(len(summary_tokens)), list(summary_tokens), fontsize=7)
    truncated = f" (first {shown} of {len(source_tokens)} tokens)" if shown < len(source_tokens) else ""
    ax.set_xlabel("input text" + truncated)
    ax.set_ylabel("generated summary")
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.03)
    return _save(fig, path)


def attention_heads(head_attention: np.ndarray, source_tokens: Sequence[str], summary_tokens: Sequence[str],
                    path: str | Path, title: str, max_source: int = 80) -> Path:
    """Fig. 5.3 per head, as Text Summarizing (blog, 2023) draws it: one heat map per copy-attention head, in a grid.

    `head_attention` (H, T generated, S source): each head's weights, which `attention_heatmap`
    shows averaged. All panels share one colour scale, so the heads compare by brightness; only the
    first `max_source` source positions are drawn (the title says so when cut). Word labels run
    along the left column and bottom row only.
    """
    heads = np.asarray(head_attention, dtype=np.float32)
    n_heads = heads.shape[0]
    shown = min(heads.shape[2], max_source, len(source_tokens))
    heads = heads[:, :, :shown]
    cols = min(4, n_heads)
    rows = -(-n_heads // cols)
    panel_w, panel_h = min(8.0, 1.0 + 0.1 * shown), min(6.0, 1.0 + 0.16 * len(summary_tokens))
    fig = Figure(figsize=(min(24.0, cols * panel_w + 1.0), min(24.0, rows * panel_h + 1.2)))
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    vmax = float(heads.max()) if heads.size else 1.0
    for h, ax in enumerate(axes.flat):
        if h >= n_heads:
            ax.set_visible(False)
            continue
        image = ax.imshow(heads[h], aspect="auto", cmap="viridis", interpolation="nearest", vmin=0.0, vmax=vmax)
        ax.set_title(f"head {h + 1}", fontsize=8)
    for ax in axes[-1]:
        ax.set_xticks(range(shown), list(source_tokens[:shown]), rotation=90, fontsize=5)
    for ax in axes[:, 0]:
        ax.set_yticks(range(len(summary_tokens)), list(summary_tokens), fontsize=6)
    cut = f" (first {shown} of {len(source_tokens)} input tokens)" if shown < len(source_tokens) else ""
    fig.suptitle(f"{title}: copy attention per head{cut}", fontsize=10)
    if n_heads:
        fig.colorbar(image, ax=axes.ravel().tolist(), fraction=0.02)
    FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:  # no tight_layout: it cannot fit a colorbar shared by a grid
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    return Path(path)


def training_curves(logs: dict[str, dict[int, pd.DataFrame]], path: str | Path,
                    phases: dict[str, float] | None = None) -> Path:
    """One panel per model comparing its training seeds: one colour per seed, training loss a thin solid
    line and validation loss (epoch ends) a dashed line with dots, so train and validation are told apart
    within a colour (the spread between a model's seeds is the seed noise every comparison is tested
    against). `phases`: {model: step} where a second training phase starts (PG-cov's coverage, See et
    al. 2017), drawn as a dotted rule. 10 inches wide (1,100 pixels), like the report's other figures.

    `logs`: {model: {seed: DataFrame with columns step, loss, valid_loss (NaN except at epoch ends)}}.
    """
    from matplotlib.lines import Line2D

    phases = phases or {}
    n = max(1, len(logs))
    cols = 1 if n == 1 else 2
    rows = -(-n // cols)
    fig = Figure(figsize=(10, 3.0 * rows + 0.3))
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    colours = matplotlib.colormaps["tab10"]
    for ax, (name, runs) in zip(axes, logs.items()):
        handles = []
        for k, (seed, log) in enumerate(runs.items()):
            colour = colours(k % 10)
            ax.plot(log["step"], log["loss"], linewidth=0.8, color=colour, alpha=0.85)
            valid = log.dropna(subset=["valid_loss"])
            if len(valid):
                ax.plot(valid["step"], valid["valid_loss"], linestyle="--", marker="o", markersize=3,
                        linewidth=1.2, color=colour)
            handles.append(Line2D([], [], color=colour, linewidth=2, label=f"seed {seed}"))
        handles += [Line2D([], [], color="0.3", linewidth=0.8, label="train"),
                    Line2D([], [], color="0.3", linestyle="--", marker="o", markersize=3, label="validation")]
        if name in phases:
            ax.axvline(phases[name], color="0.4", linestyle=":", linewidth=1.2)
            handles.append(Line2D([], [], color="0.4", linestyle=":", label="coverage on"))
        ax.set_title(f"{name}: loss per seed", fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.legend(handles=handles, fontsize=7, loc="upper right", ncol=2 if len(handles) > 4 else 1,
                  framealpha=0.8)
    for ax in axes[len(logs):]:
        ax.set_visible(False)
    return _save(fig, path)
