"""sumpipe.extractive: the extractive summarizers.

`methods/` holds the extractive methods, one module per method, all named in one registry
(`sumpipe.extractive.methods.METHODS`); `stage` runs each method as a system (the `extractive-fit`
and `extractive` stages, `commands`); `keywords` is Sokol 2022's NMF keyword table of the references.
The input-selection stage (`sumpipe.selection`) offers the same methods as model inputs.
"""
