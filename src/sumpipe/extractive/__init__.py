"""sumpipe.extractive: the extractive summarizers.

`scorers/` ranks a document's sentences, one module per method, all named in one registry
(`sumpipe.extractive.methods.METHODS`); `systems` runs each method as a summarizer (the `extractive-fit`
and `extractive` stages, `commands`); `keywords` is seed 000's NMF keyword table of the references.
The input-selection stage (`sumpipe.selection`) offers the same scorers as model inputs.
"""
