"""KL-Sum: the sentence whose words match the document's distribution comes first."""

import numpy as np

from sumpipe.extractive.methods import Analyzer, Limit
from sumpipe.extractive.methods.klsum import KlSum, kl_order


def _kl(p_doc: np.ndarray, summary: np.ndarray, alpha: float) -> float:
    q = (summary + alpha) / (summary + alpha).sum()
    keep = p_doc > 0
    return float(np.sum(p_doc[keep] * np.log(p_doc[keep] / q[keep])))


def test_first_pick_minimises_kl_computed_directly():
    doc = Analyzer().parse("storm coast town\nstorm storm\nmarket\ncoast town storm market")
    p_doc = doc.counts.sum(axis=0) / doc.counts.sum()
    direct = [_kl(p_doc, doc.counts[i], 1.0) for i in range(doc.n_sentences)]
    assert next(iter(kl_order(doc.counts, 1.0))) == int(np.argmin(direct)) == 1   # "storm storm": half the words
    assert KlSum().select(doc, Limit(sentences=1)) == [1]


def test_every_sentence_is_ranked_once():
    doc = Analyzer().parse("a1 b1\nb1 c1\nc1 d1\nd1 a1")
    assert sorted(kl_order(doc.counts)) == [0, 1, 2, 3]
