"""Extract-then-rewrite (Chen & Bansal 2018): select a story's sentences, then rewrite each with a
sentence-level model trained on (story sentence -> highlight sentence) pairs aligned by ROUGE.

- `sumpipe.rewrite.align`: the training pairs, one per highlight sentence, in the extract stage's format, so
  that the project's own `sumpipe train` trains the rewriter on them;
- `sumpipe.rewrite.compose`: the selected sentences of each story as the rewriter's inputs (one row per
  sentence, in the same format, so that the decode stage rewrites them), and the rewrites joined back into
  one summary per story.
"""
