"""sumpipe.text — Morozovskii 2022's preprocessing (Alg. 2): raw text to the text convention.

`preprocess.preprocess_text(raw)` on one document, `preprocess.preprocess(...)` as the DVC stage;
one step per module: `ascii` (encoding repair, ASCII folding), `clean` (extra symbols),
`sentences` (Punkt), `tokenize` (the fixed NLTK-book regular expression), `contractions`.
"""
