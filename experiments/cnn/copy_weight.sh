#!/usr/bin/env bash
# A model's copy-target weight on the 340 validation stories (README.md's log, "PG-cov's copy-target weight,
# 3 then 2" and "the transformers' copy-target weight, on validation"). Run in experiments/cnn after `dvc repro` with
# the model at the weight 1 (it reads data/ and the pipeline's models of MODEL), two runs at a time, one
# thread each:
#
#   bash copy_weight.sh [MODEL [WEIGHT ...]]   # as run: `bash copy_weight.sh` (PG-cov 2 3), `bash copy_weight.sh M1 2 3`
#
# It builds the workspace copyweight/MODEL/ (gitignored): the experiment's params with MODEL at weight 1 (its
# 3 seeds: the pipeline's models as they were at weight 1, linked as copyweight/MODEL/models/MODEL, so run
# this before params.yaml's weight is changed, or point BASE_MODELS at those models) and at each WEIGHT
# (<MODEL>w<WEIGHT>, PG-cov's PGw<WEIGHT>: 2 seeds each, trained here), every run decoded on the valid split
# and scored by the evaluate stage: copyweight/MODEL/metrics/{rouge,read_quality,rare_words}.json; then
# `python name_runs.py copyweight/MODEL` counts the summaries that pile up copied names.
set -euo pipefail
cd "$(dirname "$0")"
model=${1:-PG-cov}
weights=${*:2}
weights=${weights:-2 3}
short=$([ "$model" = PG-cov ] && echo PG || echo "$model")
work=copyweight/$model
mkdir -p "$work/models"
ln -sfn "$PWD/data" "$work/data"
ln -sfn "${BASE_MODELS:-$PWD/models/$model}" "$work/models/$model"
# shellcheck disable=SC2086
python - "$work/params.yaml" "$model" "$short" $weights <<'EOF'
import copy, sys
import yaml
out, name, short, weights = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
params = yaml.safe_load(open("params.yaml"))
base = params["models"][name]
base["train"] = {**base.get("train", {}), "copy_target_weight": 1.0}  # the weight it was trained with before
models = {name: base}
for weight in weights:  # named as the shell names the runs below: <short>w<WEIGHT as given>
    variant = models[f"{short}w{weight}"] = copy.deepcopy(base) | {"seeds": [1, 2]}
    variant["train"]["copy_target_weight"] = float(weight)
params["models"] = models
params["runs"] = {f"{name}-{seed}": {"model": name, "seed": seed}
                  for name, spec in models.items() for seed in spec.get("seeds", [1, 2, 3])}
params.pop("ensembles", None)
params["extractive"]["systems"] = []                # Lead-3 is evaluate's own baseline
params["train"]["workers"] = 1
params["decode"]["split"] = "valid"
yaml.safe_dump(params, open(out, "w"), sort_keys=False)
EOF
cd "$work"
trained=$(for w in $weights; do for seed in 1 2; do echo "${short}w$w $seed"; done; done)
echo "$trained" | xargs -P 2 -L 1 sh -c 'sumpipe train --model "$0" --seed "$1"'
{ for seed in 1 2 3; do echo "$model $seed"; done; echo "$trained"; } |
  xargs -P 2 -L 1 sh -c 'sumpipe decode --model "$0" --train-seed "$1"'
sumpipe evaluate
