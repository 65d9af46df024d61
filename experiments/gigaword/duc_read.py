"""Readings of the DUC 2003 test half (the README's log: "length control, headlines to a 75-byte budget" and
"headlines that read"), run in experiments/gigaword after the crosseval stage.

    python duc_read.py quality            # read quality of every system of crosseval/ beside the references
    python duc_read.py before [N] [KEY=VALUE ...]   # N (20) test documents: references, each system before / after
    python duc_read.py known [N]          # the same N documents: BERT2S to 75 bytes with any words / known words
    python duc_read.py news NEWS [FOLDER] [--judgments FILE]   # word pairs no news text of NEWS writes

`quality` prints, per system of crosseval/summary.json (a model: the mean of its seeds; an ensemble: its
one run, seed 0), the words per headline and `sumpipe.evaluate.read_quality`'s content words repeated,
fragments and jammed pairs (adjacent content words the source never writes side by side: the grammar
guard), on the 75-byte headlines the stage scored; the references' first of four beside them, cut to the
same 75 bytes; and the unknown words: the share of the headlines' words found neither in the training text
(data/vocab/words.parquet, sources and headlines) nor in their own document, the non-words a subword model
joins from pieces ("afflosated", "censusal"; `decode.known_words` bars them); the last word of a headline
the 75-byte cut reached is left out (it may be a cut word).

`before` takes every (299 // N)-th document of the test half (ids sorted) and prints a Markdown table: the
first of the four references, then for each model of `crosseval.models` and the best ensemble of
`crosseval.ensembles` (the highest R-1 recall) the headline "before" and "after", each cut to the 75 bytes
DUC scores, with its R-1 recall (four references averaged, as the stage scores it). "After" is the crosseval
stage's output (seed 1; an ensemble's one run). "Before" decodes the same weights again, for these documents
only, under the crosseval stage's decoding with KEY=VALUE `decode:` keys changed; without any, as the
experiment decoded DUC before length control: `block_ngram_repeat: 2` and no length budget (the models
trained with `length_dropout` take none, and plan their own length). So "before" is a decoding, not a
training, of another time.

`known` decodes BERT2S seed 1 on the same documents as `before`, to the crosseval stage's budget, with any
words and with `known_words` (the training text's and the document's only), and marks each unknown word
(`unknown_words`; not a last word the 75-byte cut reached) with a star; its R-1 recall at 75 bytes in
brackets.

`news` asks of every headline how much of its word order a newspaper ever writes: the share of its adjacent
word pairs that occur nowhere in NEWS (a local data file, JSON Lines with `source` and `reference`, each line
of both read as text; experiments/cnn's CNN stories hold about 5 M words), per system of FOLDER (default
crosseval/; a validation folder of `length_validation.py` works too), beside the references (first of four,
75 bytes) and the 75-byte prefix. Every text goes through the pipeline's `preprocess_text` first, and the
last word of a headline the 75-byte cut reached is left out, as in `quality`. A headline that ends in the
story's words without syntax makes pairs no news text writes ("in arch", "occupy in"); a real headline's
names make some too. `--judgments FILE` also meta-evaluates the share on SummEval
(`sumpipe.evaluate.meta_eval.correlations` with the experts' fluency: per article, system level).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from pathlib import Path

import pandas as pd
import yaml

from sumpipe.config import load_params
from sumpipe.evaluate.crosseval import decode_corpus
from sumpipe.evaluate.read_quality import read_quality
from sumpipe.evaluate.rouge import ROUGE_TYPES, FastRouge, cut_bytes, score_pairs
from sumpipe.names import seed_folder
from sumpipe.text.preprocess import preprocess_text

CROSSEVAL = Path("crosseval")
BEFORE = {"block_ngram_repeat": 2, "target_length": None}  # the decoding of DUC before length control
SHOWN_SEED = 1


def system_runs() -> dict[str, pd.DataFrame]:
    """{system: its crosseval rows}, in the summary's order (models, then ensembles)."""
    summary = json.loads((CROSSEVAL / "summary.json").read_text())
    names = [*summary["models"], *summary.get("ensembles", {})]
    return {name: pd.read_parquet(CROSSEVAL / f"{name}.parquet") for name in names}


@functools.cache
def training_words() -> set[str]:
    """Every word of the training text, sources and headlines (the vocab stage's words.parquet)."""
    return set(pd.read_parquet("data/vocab/words.parquet", columns=["token"])["token"])


def unknown_words(texts: list[str], sources: list[str], known: set[str], cut_at: int | None = None) -> float:
    """% of the words of `texts` in neither `known` nor their own source. `cut_at`: the texts were cut to
    this many bytes (DUC's 75), so the last word of a text that long may be a cut word: it is not counted."""
    words = []
    for text, src in zip(texts, sources):
        tokens, own = text.split(), set(src.split())
        if cut_at is not None and len(text.encode()) >= cut_at:
            tokens = tokens[:-1]
        words += [(w, own) for w in tokens]
    return 100 * sum(w not in known and w not in own for w, own in words) / max(len(words), 1)


def first_seed(runs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The first system's rows of its first seed: each document once, with its source and references."""
    first = next(iter(runs.values()))
    return first[first["seed"] == first["seed"].min()]


def first_references(rows: pd.DataFrame) -> list[str]:
    """The first of each row's four references, cut to DUC's 75 bytes."""
    return [cut_bytes(" ".join(r[0].split()), 75) for r in rows["references"]]


def news_pairs(path: Path) -> set[tuple[str, str]]:
    """Every adjacent word pair of every line of NEWS's sources and references, preprocessed."""
    from sumpipe.io.userfiles import iter_jsonl

    pairs: set[tuple[str, str]] = set()
    for _, example, _ in iter_jsonl(path):
        for line in f"{example['source']}\n{example['reference']}".split("\n"):
            words = preprocess_text(line).split()
            pairs.update(zip(words, words[1:]))
    return pairs


def unseen_pairs(texts: list[str], pairs: set[tuple[str, str]], cut_at: int | None = None) -> float:
    """Mean over `texts` of the % of each text's adjacent word pairs not in `pairs` (texts with no pair are
    skipped); `cut_at` as in `unknown_words`: a text that long loses its last, perhaps cut, word."""
    shares = []
    for text in texts:
        words = preprocess_text(text).split()
        if cut_at is not None and len(text.encode()) >= cut_at:
            words = words[:-1]
        own = list(zip(words, words[1:]))
        if own:
            shares.append(sum(p not in pairs for p in own) / len(own))
    return 100 * sum(shares) / max(len(shares), 1)


def summeval_check(pairs: set[tuple[str, str]], judgments: Path) -> None:
    """Kendall's tau of the share of pairs seen in NEWS (the negated unseen share: higher should read
    better) with SummEval's fluency, per article and at system level."""
    import numpy as np

    from sumpipe.evaluate.meta_eval import correlations, read_judgments

    summeval = read_judgments(judgments)
    seen = np.array([[-unseen_pairs([text], pairs) for text in row] for row in summeval.outputs])
    taus = correlations(seen, summeval.human["fluency"])
    print(f"\nSummEval ({len(summeval.ids)} articles x {len(summeval.systems)} systems), fluency: "
          f"per article {taus['article']:+.3f}, system level {taus['system']:+.3f}")


def news(path: Path, folder: Path, judgments: Path | None) -> None:
    pairs = news_pairs(path)
    summary = json.loads((folder / "summary.json").read_text())
    listed = [*summary["models"], *summary.get("ensembles", {})]  # a validation folder lists its last run only
    names = [*listed, *sorted({f.stem for f in folder.glob("*.parquet")} - set(listed))]
    runs = {name: pd.read_parquet(folder / f"{name}.parquet") for name in names}
    one = first_seed(runs)
    rows = {"references (first of four, 75 bytes)": [first_references(one)],
            "prefix (the first 75 bytes)": [[cut_bytes(s, 75) for s in one["source"]]]}
    rows |= {name: [g["prediction"].tolist() for _, g in frame.groupby("seed")] for name, frame in runs.items()}
    print(f"{folder}: {len(one)} documents; {len(pairs):,} word pairs in {path.name}")
    print("| system | seeds | word pairs no news text writes % |")
    print("|---|---:|---:|")
    for name, each in rows.items():
        share = sum(unseen_pairs(texts, pairs, cut_at=75) for texts in each) / len(each)
        print(f"| {name} | {len(each)} | {share:.1f} |")
    if judgments is not None:
        summeval_check(pairs, judgments)


def quality() -> None:
    known = training_words()
    runs = system_runs()
    one = first_seed(runs)
    refs = first_references(one)
    rows = {"references (first of four, 75 bytes)": [(refs, one["source"].tolist(), refs)]}
    for name, frame in runs.items():
        rows[name] = [(g["prediction"].tolist(), g["source"].tolist(), [r[0] for r in g["references"]])
                      for _, g in frame.groupby("seed")]
    print("| system | seeds | words | content words repeated % | fragments % | jammed pairs % | unknown words % |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, each in rows.items():
        figures = [read_quality(*args) for args in each]
        words = sum(sum(len(t.split()) for t in args[0]) / len(args[0]) for args in each) / len(each)
        rep, frag, jam = (sum(f[key] for f in figures) / len(figures)
                          for key in ("repeated_words", "fragment_rate", "jammed_pairs"))
        unknown = sum(unknown_words(texts, sources, known, cut_at=75) for texts, sources, _ in each) / len(each)
        print(f"| {name} | {len(each)} | {words:.2f} | {rep:.2f} | {frag:.2f} | {jam:.2f} | {unknown:.2f} |")


def shown_documents(runs: dict[str, pd.DataFrame], first_system: str, n: int) -> pd.DataFrame:
    """Every (len // n)-th document of the test half, ids sorted, n of them (seed 1's rows)."""
    first = runs[first_system]
    docs = first[first["seed"] == SHOWN_SEED].sort_values("id")
    return docs.iloc[:: len(docs) // n].head(n).reset_index(drop=True)


def starred(text: str, own: set[str], known: set[str], cut_at: int) -> str:
    """`text` with a star on each word in neither `known` nor `own` (not on a last word the cut reached)."""
    tokens = text.split()
    checked = len(tokens) - 1 if len(text.encode()) >= cut_at else len(tokens)
    return " ".join(f"{w}*" if i < checked and w not in known and w not in own else w for i, w in enumerate(tokens))


def known(n: int, model: str = "BERT2S") -> None:
    params = load_params("params.yaml")
    docs = shown_documents(system_runs(), params.crosseval.models[0], n)
    words = training_words()
    base = params.crosseval.decode_config(params.decode)
    scorer = FastRouge(ROUGE_TYPES, params.evaluate.use_stemmer, params.crosseval.protocol.references)
    folder = Path(params.paths.models) / model / seed_folder(SHOWN_SEED)
    cells = []
    for rule in (False, True):
        decoded = decode_corpus(folder, docs["source"].tolist(), params.paths.vocab,
                                dataclasses.replace(base, known_words=rule))
        cut = [cut_bytes(text, params.crosseval.protocol.max_bytes) for text in decoded]
        recall = score_pairs(cut, [list(r) for r in docs["references"]], scorer=scorer)["rouge1_recall"].tolist()
        cells.append([f"{starred(text, set(src.split()), words, params.crosseval.protocol.max_bytes)} ({100 * r:.0f})"
                      for text, src, r in zip(cut, docs["source"], recall)])
    print(f"{model} seed {SHOWN_SEED}, {base.target_length} {base.length_unit}: any words → known words "
          "(* a word in neither the training text nor the document)")
    for i, row in docs.iterrows():
        print(f"\n**{row['id']}** — {' '.join(row['references'][0].split())}")
        print(f"- {cells[0][i]} → {cells[1][i]}")


def before(n: int, changes: dict[str, object]) -> None:
    params = load_params("params.yaml")
    runs = system_runs()
    summary = json.loads((CROSSEVAL / "summary.json").read_text())
    corpus = summary["corpus"]
    ensembles = list(summary.get("ensembles", {}))
    best = max(ensembles, key=lambda e: summary["systems"][f"{e} ({corpus})"]["rouge1_recall"]) if ensembles else None
    shown = [*params.crosseval.models, *([best] if best else [])]
    docs = shown_documents(runs, shown[0], n)
    base = params.crosseval.decode_config(params.decode)
    old = dataclasses.replace(base, **(changes or BEFORE))
    scorer = FastRouge(ROUGE_TYPES, params.evaluate.use_stemmer, params.crosseval.protocol.references)
    max_bytes = params.crosseval.protocol.max_bytes
    cells: dict[str, list[str]] = {}
    for name in shown:
        if name in params.crosseval.models:
            folders: Path | list[Path] = Path(params.paths.models) / name / seed_folder(SHOWN_SEED)
            after = runs[name][runs[name]["seed"] == SHOWN_SEED].set_index("id")
        else:
            spec = summary["ensembles"][name]
            folders = [Path(params.paths.models) / spec["model"] / seed_folder(s) for s in spec["seeds"]]
            after = runs[name].set_index("id")
        decoded = decode_corpus(folders, docs["source"].tolist(), params.paths.vocab, old)
        then = [cut_bytes(text, max_bytes) for text in decoded]
        scores = score_pairs(then, [list(r) for r in docs["references"]], scorer=scorer)["rouge1_recall"].tolist()
        now = after.loc[docs["id"]]
        cells[name] = [f"{b} ({100 * sb:.0f}) → {a} ({100 * sa:.0f})" for b, sb, a, sa in
                       zip(then, scores, now["prediction"], now["rouge1_recall"])]
    print(f"seed {SHOWN_SEED} (ensemble {best}: its one run); before: {changes or BEFORE}, after: the crosseval stage")
    for i, row in docs.iterrows():
        print(f"\n**{row['id']}** — {' '.join(row['references'][0].split())}")
        for name in shown:
            print(f"- {name}: {cells[name][i]}")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "quality":
        quality()
    elif command == "before":
        before(int(sys.argv[2]) if len(sys.argv) > 2 else 20,
               {k: yaml.safe_load(v) for k, v in (a.split("=", 1) for a in sys.argv[3:])})
    elif command == "known":
        known(int(sys.argv[2]) if len(sys.argv) > 2 else 20)
    elif command == "news" and len(sys.argv) > 2:
        rest, judged = sys.argv[3:], None
        if "--judgments" in rest:
            at = rest.index("--judgments")
            judged, rest = Path(rest[at + 1]), rest[:at] + rest[at + 2:]
        news(Path(sys.argv[2]), Path(rest[0]) if rest else CROSSEVAL, judged)
    else:
        sys.exit(__doc__)
