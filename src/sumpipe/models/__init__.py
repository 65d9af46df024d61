"""sumpipe.models — the summarization models and what they share.

- `layers`: multi-head attention (fused SDPA, additive bias, KV cache), the pointer-generator head
  and mix (Eqn 2.17-2.18), positions, feed-forward, additive attention with coverage (RNN models).
- `registry`: model families (`Family`, `register_family`, `get_family`, `resolve_model`): the one
  place train / decode / evaluate / report look a family up; adding one = a module + a `BUILTIN` line.
- `transformer`: the `transformer` family, M1 / M2 (`PointerGeneratorTransformer`).
- `card`: `ModelCard`, a model directory's config.json, typed and validated.
- `task`: `SummarizationTask`, the transformer family's training task (batches, label-smoothed loss).
- `batching`: Table 4.4 encoding (`encode_examples`), `collate` -> `Batch`, `bucket_batches`,
  `WordCodec` (decode-time text <-> ids of word-vocabulary families).
- `loss`: `label_smoothed_nll` over the extended vocabulary.
- `vocabulary`: `VocabularyKind` (how a family's vocabulary is made, stored and read) and
  `WORD_VOCABULARY`, the word families' kind.
- `io`: `save_pretrained` / `load_pretrained` (safetensors + model card + the family's vocabulary).
- `protocol`: the incremental decoding contract the decoders rely on.
"""
