"""sumpipe.models — the summarization models and what they share.

- `layers`: multi-head attention (fused SDPA, additive bias, KV cache), the pointer-generator head
  and mix (Eqn 2.17-2.18), positions, feed-forward, additive attention with coverage (RNN models).
- `transformer`: M1 / M2 (`PointerGeneratorTransformer`, `build_model`).
- `batching`: Table 4.4 encoding (`encode_examples`), `collate` -> `Batch`, `bucket_batches`.
- `loss`: `label_smoothed_nll` over the extended vocabulary.
- `io`: `save_pretrained` / `load_pretrained` (safetensors + config.json + vocab.parquet).
- `protocol`: the incremental decoding contract the decoders rely on.
"""
