"""sumpipe.decode: summaries from trained models and extractive methods.

`summarizer` is the public API of a model (`sumpipe.load`, `Summary`) and `extractive` that of an
extractive method (`sumpipe.load_extractive`, `sumpipe summarize`); `interactive` reads raw input for
`sumpipe decode INPUT` and resolves model names; `batches` decodes in length-sorted batches (under
the API, the decode stage, crosseval), with `search` (beam, greedy, sampling); `stage` is the decode
stage (one run or ensemble), `pool` the predict stage (every summarizer side by side), `attention` keeps
the report's heat-map attention, `readable` turns tokens into prose.
"""
