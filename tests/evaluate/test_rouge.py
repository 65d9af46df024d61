"""ROUGE: hand-computed values, and identity with Google's rouge-score (the reference) on random and real pairs,
several references, newline-separated sentences, non-ASCII text and empty strings."""

from __future__ import annotations

import gzip
import json
import random
from itertools import islice

import pytest
from rouge_score import rouge_scorer

from sumpipe.evaluate.rouge import FIELDS, ROUGE_TYPES, FastRouge, cut_bytes, score_pairs

TYPES = list(ROUGE_TYPES)


def approx(triple, expected):
    return triple == pytest.approx(expected, abs=1e-12)


# --------------------------------------------------------------------------------------------
# Hand-computed values
# --------------------------------------------------------------------------------------------
def test_unigrams_bigrams_and_lcs_by_hand() -> None:
    # ref  : the cat lay on the mat   pred: the cat sat on the mat   (6 tokens each)
    # R-1  : the x2, cat, on, mat match -> 5/6 both ways
    # R-2  : "the cat", "on the", "the mat" of 5 bigrams -> 3/5
    # R-L  : LCS "the cat on the mat" -> 5/6
    s = FastRouge().score("the cat lay on the mat", "the cat sat on the mat")
    assert approx(s["rouge1"], (5 / 6, 5 / 6, 5 / 6))
    assert approx(s["rouge2"], (3 / 5, 3 / 5, 3 / 5))
    assert approx(s["rougeL"], (5 / 6, 5 / 6, 5 / 6))
    assert approx(s["rougeLsum"], (5 / 6, 5 / 6, 5 / 6))  # one sentence each: Lsum = L


def test_precision_is_over_the_prediction() -> None:
    # Morozovskii 2022 §2.1.7: "My dog jumped over the long fence" vs "The dog jumped": 3 shared words.
    # ROUGE (and rouge-score) divide by the prediction for precision: P = 3/3, R = 3/7, F = 0.6.
    # (The thesis names the two the other way round; F1 is symmetric, so its tables agree.)
    s = FastRouge().score("My dog jumped over the long fence", "The dog jumped")
    assert approx(s["rouge1"], (1.0, 3 / 7, 0.6))
    # bigrams: "dog jumped" only; pred has 2, ref 6 -> P 1/2, R 1/6, F = 2(1/12)/(2/3) = 1/4
    assert approx(s["rouge2"], (1 / 2, 1 / 6, 1 / 4))


def test_summary_level_lcs_by_hand() -> None:
    # ref : "the cat sat on the mat" / "the dog ran"    pred: "the cat lay on the mat" / "the dog sat"
    # ref sentence 1: LCS with pred 1 = the cat . on the mat {0,1,3,4,5}; with pred 2 = the . sat {0,2}
    #   union = all 6 tokens, all within the token counts -> 6 hits
    # ref sentence 2: LCS with pred 1 = "the", with pred 2 = "the dog" -> union {the, dog} -> 2 hits
    # Lsum = 8/9 both ways, whereas plain ROUGE-L (LCS over whole texts: the cat on the mat the dog) = 7/9.
    s = FastRouge().score("the cat sat on the mat\nthe dog ran", "the cat lay on the mat\nthe dog sat")
    assert approx(s["rougeLsum"], (8 / 9, 8 / 9, 8 / 9))
    assert approx(s["rougeL"], (7 / 9, 7 / 9, 7 / 9))


def test_summary_level_lcs_clips_repeated_tokens() -> None:
    # ref "a b" / "a b" (4 tokens); pred "a b a b" as one sentence (4 tokens). Each ref sentence's
    # LCS with the prediction is "a b"; the union per sentence is 2 tokens, and the counts (a: 2, b: 2)
    # allow all 4 -> 4/4. With pred "a b" only: counts a: 1, b: 1 -> hits 2 -> P 2/2, R 2/4.
    fr = FastRouge(["rougeLsum"], use_stemmer=False)
    assert approx(fr.score("a b\na b", "a b a b")["rougeLsum"], (1.0, 1.0, 1.0))
    assert approx(fr.score("a b\na b", "a b")["rougeLsum"], (1.0, 0.5, 2 / 3))


def test_stemming_and_tokenizer() -> None:
    # "running"/"runs" stem to "run"; punctuation and case are separators/ignored; "ran" does not stem.
    on = FastRouge(["rouge1"], use_stemmer=True).score("Running, RUNS!", "run run")["rouge1"]
    off = FastRouge(["rouge1"], use_stemmer=False).score("Running, RUNS!", "run run")["rouge1"]
    assert approx(on, (1.0, 1.0, 1.0))
    assert approx(off, (0.0, 0.0, 0.0))


def test_empty_texts_score_zero() -> None:
    s = FastRouge().score("the cat", "")
    assert all(s[t] == (0.0, 0.0, 0.0) for t in TYPES)
    s = FastRouge().score("...", "the cat")
    assert all(s[t] == (0.0, 0.0, 0.0) for t in TYPES)


def test_multi_reference_keeps_the_best_per_type() -> None:
    refs = ["the cat sat on the mat", "a cat on a mat sat", "mat"]
    pred = "the cat sat"
    fr = FastRouge()
    best = fr.score_multi(refs, pred)
    each = [fr.score(r, pred) for r in refs]
    for t in TYPES:
        assert best[t] == max((e[t] for e in each), key=lambda x: x[2])
    # R-1 F: ref 0 -> P 3/3, R 3/6, F 2/3; ref 1 -> "cat", "sat": P 2/3, R 2/6, F 4/9; ref 2 -> 0
    assert approx(best["rouge1"], (1.0, 0.5, 2 / 3))
    # and the same as rouge-score's own score_multi, including the precision/recall it keeps
    theirs = rouge_scorer.RougeScorer(TYPES, use_stemmer=True).score_multi(refs, pred)
    assert all(tuple(theirs[t]) == best[t] for t in TYPES)


def test_multi_reference_ties_keep_the_first() -> None:
    # pred "a b c": ref "a b c x y z w q r" -> P 1, R 1/3, F 1/2; ref "a" -> P 1/3, R 1, F 1/2.
    # Equal F1: the first reference wins (np.argmax in score_multi), with its own P and R.
    fr = FastRouge(["rouge1"], use_stemmer=False)
    long, short = "a b c x y z w q r", "a"
    assert approx(fr.score_multi([long, short], "a b c")["rouge1"], (1.0, 1 / 3, 0.5))
    assert approx(fr.score_multi([short, long], "a b c")["rouge1"], (1 / 3, 1.0, 0.5))
    theirs = rouge_scorer.RougeScorer(["rouge1"]).score_multi([short, long], "a b c")
    assert fr.score_multi([short, long], "a b c")["rouge1"] == tuple(theirs["rouge1"])


# --------------------------------------------------------------------------------------------
# Identity with rouge-score
# --------------------------------------------------------------------------------------------
WORDS = ("the cat cats sat sitting on a mat mats dog dogs ran running runs quickly , . ! 's "
         "n't 1,000 U.S. état naïve -- 42 Über").split()


def random_text(rng: random.Random) -> str:
    sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 12))) for _ in range(rng.randrange(1, 5))]
    return "\n".join(sentences)


# --------------------------------------------------------------------------------------------
# The DUC protocol: the byte cut (ROUGE-1.5.5 -b) and the mean over the references (-f A)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "size", "expected"), [
    ("israeli prime minister ariel sharon", 20, "israeli prime minist"),  # a word cut in two, as ROUGE-1.5.5 -b
    ("short", 75, "short"),
    ("a .\nb c", 5, "a .\nb"),       # a sentence break is one byte
    ("caf\u00e9 au lait", 4, "caf"),  # the two bytes of "é": half a character is dropped
    ("caf\u00e9 au lait", 5, "caf\u00e9"),
    ("anything", None, "anything"),
])
def test_cut_bytes(text: str, size: int | None, expected: str) -> None:
    assert cut_bytes(text, size) == expected


def test_several_references_averaged_as_rouge_1_5_5_model_average() -> None:
    # pred "the cat ran" against "the cat sat" (R-1 P = R = 2/3, R-2 1/2: "the cat" of "the cat", "cat ran") and
    # "a dog ran" (R-1 1/3, R-2 0): the mean is 1/2 and 1/4; best-of keeps 2/3 and 1/2
    refs, pred = ["the cat sat", "a dog ran"], "the cat ran"
    average = FastRouge(["rouge1", "rouge2"], references="average").score_multi(refs, pred)
    assert approx(average["rouge1"], (0.5, 0.5, 0.5)) and approx(average["rouge2"], (0.25, 0.25, 0.25))
    best = FastRouge(["rouge1", "rouge2"]).score_multi(refs, pred)
    assert approx(best["rouge1"], (2 / 3, 2 / 3, 2 / 3)) and approx(best["rouge2"], (0.5, 0.5, 0.5))
    # P, R and F1 are averaged each (not F1 recomputed from the mean P and R): a long and a short reference
    many = score_pairs(["a b", "a b c", "x"], [["a b c d", "a"], "a b c", ["y", "x", "x z"]], rouge_types=["rouge1"],
                       references_mode="average")
    assert many["rouge1_recall"].tolist() == pytest.approx([(2 / 4 + 1) / 2, 1.0, (0 + 1 + 1 / 2) / 3])
    assert many["rouge1_precision"].tolist() == pytest.approx([(1 + 1 / 2) / 2, 1.0, (0 + 1 + 1) / 3])
    assert many.at[0, "rouge1_fmeasure"] == pytest.approx((2 * 0.5 / 1.5 + 2 * 0.5 / 1.5) / 2)
    with pytest.raises(ValueError, match="references must be 'best' or 'average'"):
        FastRouge(references="max")


def _stored(shared_data, path: str) -> list[dict]:
    with gzip.open(shared_data / path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.shared
def test_the_75_byte_prefix_scores_the_published_check_on_duc_2003_and_gigaword(shared_data) -> None:
    """The DUC protocol as ROUGE-1.5.5 `-b 75 -f A` runs it, with rouge-score's tokenizer and Porter stemmer,
    on the texts as ../shared/data stores them (inputs lowercased and tokenized, references as NIST wrote
    them): the first 75 bytes of each input score 21.75 / 6.34 / 19.02 R-1/R-2/R-L recall averaged over the
    four references of DUC 2003 (Rush et al. 2015, the same baseline on DUC 2004 with ROUGE-1.5.5: 22.43 /
    6.49 / 19.65), and 31.56 / 12.41 / 28.82 F1 on the 1,036 Gigaword test pairs. A word cut in two keeps its
    piece (the same cut at a word boundary scores 21.56 R-1 and 32.30 on Gigaword)."""
    duc = _stored(shared_data, "duc2003/duc2003_task1.jsonl.gz")
    prefix = [cut_bytes(r["source"], 75) for r in duc]
    scores = score_pairs(prefix, [r["references"] for r in duc], rouge_types=["rouge1", "rouge2", "rougeL"],
                         references_mode="average")
    recall = [round(scores[f"{t}_recall"].mean() * 100, 2) for t in ("rouge1", "rouge2", "rougeL")]
    assert (len(duc), recall) == (624, [21.75, 6.34, 19.02])
    assert round(scores["rouge1_fmeasure"].mean() * 100, 2) == 19.48  # F1 averaged over the references, beside
    giga = [r for r in _stored(shared_data, "gigaword/gigaword_pairs.jsonl.gz") if r["split"] == "valid"]
    scores = score_pairs([cut_bytes(r["source"], 75) for r in giga], [r["reference"] for r in giga],
                         rouge_types=["rouge1", "rouge2", "rougeL"])
    f1 = [round(scores[f"{t}_fmeasure"].mean() * 100, 2) for t in ("rouge1", "rouge2", "rougeL")]
    assert (len(giga), f1) == (1036, [31.56, 12.41, 28.82])


@pytest.mark.parametrize("use_stemmer", [True, False])
def test_identical_to_rouge_score_on_random_pairs(use_stemmer: bool) -> None:
    rng = random.Random(1234 + use_stemmer)
    pairs = [(random_text(rng), random_text(rng)) for _ in range(600)]
    theirs = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
    ours = FastRouge(TYPES, use_stemmer=use_stemmer)
    for ref, pred in pairs:
        expected = theirs.score(ref, pred)
        got = ours.score(ref, pred)
        for t in TYPES:
            assert got[t] == tuple(expected[t]), (ref, pred, t)  # the same floats, bit for bit


def test_identical_to_rouge_score_with_several_references() -> None:
    # Best reference per type by F1, first on ties, with that reference's own P and R.
    rng = random.Random(99)
    theirs = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
    preds, refs = [], []
    for _ in range(200):
        preds.append(random_text(rng))
        refs.append([random_text(rng) for _ in range(rng.randrange(1, 5))])
    refs[0] = [preds[0], preds[0]]  # a tie
    got = score_pairs(preds, refs)
    for row, (pred, targets) in enumerate(zip(preds, refs)):
        expected = theirs.score_multi(targets, pred)
        for t in TYPES:
            for f in FIELDS:
                assert got.at[row, f"{t}_{f}"] == getattr(expected[t], f), (targets, pred, t, f)


NON_ASCII = [
    ("Die Straße ist naïve, café crème", "die strasse ist naive cafe creme"),
    ("\u212a\u212aELVIN", "kkelvin"),  # KELVIN SIGN lowercases to ASCII "k" in Python
    ("\u0130stanbul \u0130", "istanbul i"),  # dotted capital I lowercases to "i" + U+0307
    ("Правительство объявило меры 2024", "меры 2024"),  # Cyrillic is dropped, digits kept
    ("今天天气很好 ok", "ok 今天"),
    ("ﬁle ﬀ ｆｕｌｌ", "file ff full"),  # ligatures and full-width letters are not folded
    ("bad \ud800 surrogate", "bad surrogate"),  # a lone surrogate is a separator
]


@pytest.mark.parametrize("ref, pred", NON_ASCII)
def test_identical_to_rouge_score_on_non_ascii_text(ref: str, pred: str) -> None:
    expected = rouge_scorer.RougeScorer(TYPES, use_stemmer=True).score(ref, pred)
    got = FastRouge().score(ref, pred)
    assert all(got[t] == tuple(expected[t]) for t in TYPES)


@pytest.mark.parametrize("ref, pred", [("", ""), ("", "a b"), ("a b", ""), ("\n\n", "a\n"), ("--", "...")])
def test_empty_strings_score_zero_as_in_rouge_score(ref: str, pred: str) -> None:
    expected = rouge_scorer.RougeScorer(TYPES, use_stemmer=True).score(ref, pred)
    got = score_pairs([pred], [ref])
    for t in TYPES:
        for f in FIELDS:
            assert got.at[0, f"{t}_{f}"] == getattr(expected[t], f) == 0


def test_score_pairs_frame_columns_and_no_pairs() -> None:
    frame = score_pairs(["the cat sat"], ["the cat"])
    assert list(frame.columns) == [f"{t}_{f}" for t in TYPES for f in FIELDS]
    assert frame.at[0, "rouge1_recall"] == 1.0 and frame.at[0, "rouge1_precision"] == 2 / 3
    assert score_pairs([], []).shape == (0, 12)
    with pytest.raises(ValueError, match="no reference"):
        score_pairs(["a"], [[]])


def test_score_pairs_rejects_unaligned_inputs() -> None:
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        score_pairs(["a", "b"], ["a"])


def _compare_real(pairs: list[tuple[str, str]]) -> None:
    theirs = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
    got = score_pairs([p for _, p in pairs], [r for r, _ in pairs])
    for row, (ref, pred) in enumerate(pairs):
        expected = theirs.score(ref, pred)
        for t in TYPES:
            for f in FIELDS:
                assert got.at[row, f"{t}_{f}"] == getattr(expected[t], f)


def test_identical_on_real_xsum_outputs(shared_data) -> None:
    path = shared_data / "rouge_check" / "xsum_test_outputs.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in islice(f, 120)]
    _compare_real([(r["reference"], r["system_outputs"][s]) for r in rows for s in ("ptgen", "lead")])


def test_identical_on_real_multi_sentence_texts(shared_data) -> None:
    # CNN highlights (several "\n"-separated sentences) against the story's first paragraphs: ROUGE-Lsum
    # with many sentences on both sides.
    path = shared_data / "cnndm" / "cnn_stories.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in islice(f, 40)]
    _compare_real([(r["reference"], "\n".join(r["source"].split("\n")[:4])) for r in rows])
