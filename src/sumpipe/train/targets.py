"""Training targets with sentence boundaries (`train.sentence_ends`).

A reference in the text convention holds one sentence a line, but a model's target is its tokens in one
line (`sumpipe.models.batching.encode_example` splits on any white space), so a sentence boundary the
reference marks only by a line break is lost. CNN's highlights are such lines ("police arrest three men"
with no final period): trained on them, every model wrote one run-on sentence. `end_sentences` ends every
line that does not already end a sentence (`sumpipe.names.SENTENCE_END`) with a "." token, so the boundary
is a token the model can learn to write; decoding breaks the line after it again
(`sumpipe.decode.batches.summary_text`), which is how `sumpipe.evaluate.read_quality` counts sentences for
the summaries and, by their line breaks, for the references. The scored references stay as they are (ROUGE
ignores punctuation).
"""

from __future__ import annotations

from typing import Any

from sumpipe.names import SENTENCE_END

END = "."


def end_sentences(text: str) -> str:
    """`text` with " ." after every line whose last token ends no sentence: "a b\\nc d ." ->
    "a b .\\nc d ."; empty lines stay empty, and a line ending in "!" or "?" is kept as is."""
    lines = []
    for line in text.split("\n"):
        tokens = line.split()
        lines.append(line if not tokens or tokens[-1] in SENTENCE_END else f"{line.rstrip()} {END}")
    return "\n".join(lines)


def with_sentence_ends(frame: Any) -> Any:
    """A copy of a frame with a `reference` column (pandas), each reference through `end_sentences`."""
    out = frame.copy()
    out["reference"] = [end_sentences(text or "") for text in out["reference"].tolist()]
    return out
