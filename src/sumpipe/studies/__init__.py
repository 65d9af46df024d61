"""The studies: the stage code of the DVC sub-projects under experiments/, each with a folder of its own.

- `numerals`, `numerals_report`: Hansen & Petersen 2019's numerals experiment, one run and the figures
  (experiments/numerals);
- `sweep`: one point of the hyper-parameter sweep that chose the default model (experiments/sweep);
- `decoding`: decoding settings on the validation split under the read-quality guards
  (experiments/decoding, and the real-text experiments' decoding sweeps);
- `commands`: their commands, `sumpipe numerals run|report`, `sweep`, `decoding` and `meta-eval` (whose
  stage code is `sumpipe.evaluate.meta_eval`).
"""
