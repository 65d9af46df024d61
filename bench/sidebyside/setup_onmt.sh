#!/usr/bin/env bash
# The benchmark's own environment for OpenNMT-py 3.5.1 (never a sumpipe dependency).
#
# Why OpenNMT-py 3.5.1 and not eole: it is the tool the issue names (transformer + copy_attn, the
# See et al. pointer-generator recipe) and its last release; eole is a rewrite with its own config schema.
# OpenNMT-py 3.5.1 pins torch<2.3; sumpipe runs on torch 2.13.0 (CPU). To compare the two on the same
# kernels it is installed with --no-deps over the same torch 2.13.0 CPU wheel, plus only the packages
# that `import onmt.bin.train, onmt.bin.translate, onmt.inference_engine` needs (found by importing
# them; OpenNMT-py registers every data transform at start-up, so modules of transforms this benchmark
# does not use are imported too):
#   configargparse, PyYAML             option parsing and the YAML config
#   numpy, regex, pyahocorasick        onmt.inputters / onmt.transforms
#   pyonmttok                          imported at module level by onmt.inputters.inputter
#   rapidfuzz, spacy, fasttext-wheel   module-level imports of the fuzzymatch, terminology, clean transforms
#   sacrebleu                          onmt.scorers (BLEU/TER validation scoring; unused here)
# Left out: ctranslate2, tensorboard, flask, waitress, six (not imported on these paths).
# Usage: bench/sidebyside/setup_onmt.sh [VENV]   (default /work/venv-onmt)
set -euo pipefail
VENV=${1:-/work/venv-onmt}
python3 -m venv "$VENV"
. "$VENV/bin/activate"
pip install -q torch==2.13.0 numpy
pip install -q --no-deps opennmt-py==3.5.1
pip install -q configargparse PyYAML regex pyahocorasick pyonmttok rapidfuzz spacy fasttext-wheel sacrebleu
python -c "import onmt.bin.train, onmt.bin.translate, onmt.inference_engine, torch; print('OpenNMT-py', __import__('onmt').__version__, 'torch', torch.__version__)"
