"""Copy rate: how much of what a system writes a vocabulary-bound generator could only copy.

A pointer-generator model generates from its output vocabulary, the first V ids of the vocab stage's
`vocab.parquet` (the four specials, then the words by training count), and can write any other word only
by copying it from its input. Per run of summaries, pooled over its tokens (the preprocessed
whitespace-separated ones, punctuation included, as the models write them):

    copy rate = 100 x #{summary tokens outside the first V vocabulary entries} / #{summary tokens}

- V is the model card's `vocab_size`: M1/M2 `model.vocab_size`, PG-cov its family's
  `families.rnn.vocab_size` (a model's `arch.vocab_size` override wins), never more than vocab.parquet has
  (`sumpipe.models.vocabulary`: a small corpus has fewer words).
- A system with no word vocabulary of its own is measured against the transformer's V (`model.vocab_size`),
  so every row is comparable: the extractive systems and baselines (they copy everything, and the rate says
  how much of what they copy lies outside that vocabulary) and BERT2S, which writes sentencepiece pieces and
  so can spell any word: its rate counts the *words* it writes that a V-word generator could only have
  copied.
- `in_source`: of those tokens, the share that the document's source (the whole preprocessed text)
  contains: copies. For a pointer model nearly all are (it has no other way to write them); BERT2S also
  spells words that are in neither its vocabulary nor its input (in the default run, of its 260 test
  tokens outside the 2,000 words, 150 were never seen in training), which this tells apart from copying.
- Anchor: the references' own share against the same V (several references: all of their tokens), i.e.
  how much copying the references ask for: a model whose rate is far below its references' does not write
  the words they keep (the train references: 12.7 % against M1's 2,000 words).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sumpipe.config import Params


def copy_figures(texts: Sequence[str], sources: Sequence[str], vocabulary: frozenset[str]) -> dict[str, float]:
    """`copy_rate`: 100 x the share of the tokens of `texts` (pooled) that are not in `vocabulary`;
    `in_source`: 100 x the share of those that their own text's source contains (module docstring). NaN
    where there is nothing to count."""
    outside = total = found = 0
    for text, source in zip(texts, sources, strict=True):
        tokens = text.split()
        total += len(tokens)
        rare = [token for token in tokens if token not in vocabulary]
        if rare:
            outside += len(rare)
            held = set(source.split())
            found += sum(token in held for token in rare)
    return {"copy_rate": 100.0 * outside / total if total else float("nan"),
            "in_source": 100.0 * found / outside if outside else float("nan")}


@dataclass(frozen=True)
class OutputVocabularies:
    """How many of vocab.parquet's first entries each system is measured against (module docstring).

    `shared`: the transformer's V, for every system without a word vocabulary of its own;
    `models`: {model name: its own V} for the models of a word-vocabulary family."""

    shared: int
    models: Mapping[str, int] = field(default_factory=dict)

    def size_of(self, model: str | None) -> tuple[int, bool]:
        """(V, whether it is the model's own output vocabulary) for `model` (None: not a model)."""
        if model is not None and model in self.models:
            return self.models[model], True
        return self.shared, False


def output_vocabularies(params: Params) -> OutputVocabularies:
    """Each model's output-vocabulary size as training sets it (its family's arch with the model's
    overrides: `sumpipe.models.registry.resolve_model`), and the transformer family's for the rest."""
    from sumpipe.models.registry import get_family, resolve_model
    from sumpipe.models.vocabulary import WORD_VOCABULARY

    transformer = get_family("transformer", "models.<name>.family")
    shared = int(transformer.arch_from(transformer.base_arch(params), "model").vocab_size)
    own = {}
    for name in params.models:
        family, _, arch = resolve_model(params, name)
        if family.vocabulary is WORD_VOCABULARY:
            own[name] = int(arch.vocab_size)
    return OutputVocabularies(shared=shared, models=own)
