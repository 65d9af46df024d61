"""sumpipe.selection: the input-selection stage (`sumpipe extract`): Morozovskii 2022's Alg. 1, the first N tokens,
and every selectable extractive method (`sumpipe.extractive.methods`) as a model input."""
