"""Lead: the first sentences (the Lead-3 baseline of See et al. and Morozovskii 2022 §5.4.1)."""

from __future__ import annotations

from collections.abc import Iterable

from sumpipe.extractive.methods import register
from sumpipe.extractive.methods.base import RankingMethod
from sumpipe.extractive.methods.document import Document


@register
class Lead(RankingMethod):
    """Sentences in document order: with a 3-sentence limit, Lead-3."""

    name = "lead"
    uses_terms = False

    def rank(self, doc: Document) -> Iterable[int]:
        return range(doc.n_sentences)
