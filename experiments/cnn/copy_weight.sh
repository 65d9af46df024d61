#!/usr/bin/env bash
# Issue 53: PG-cov's copy-target weight on the 340 validation stories (docs/realtext.md, "The copy-target
# weight of PG-cov"). Run in experiments/cnn after `dvc repro` (it reads data/ and the pipeline's PG-cov
# models, trained at the weight 1 then in params.yaml), about 30 minutes on one core:
#
#   bash copy_weight.sh
#
# It builds the workspace copyweight/ (gitignored): the experiment's params with PG-cov at weight 1 (its 3
# seeds: the pipeline's models as they were, linked as copyweight/models/PG-cov, so run this before
# params.yaml's weight is changed, or point PGCOV_MODELS at those models) and at 2 and 3 (PGw2, PGw3: 2
# seeds each, trained here), every run decoded on the valid split and scored by the evaluate stage:
# copyweight/metrics/{rouge,read_quality,rare_words}.json.
set -euo pipefail
cd "$(dirname "$0")"
work=copyweight
mkdir -p "$work/models"
ln -sfn "$PWD/data" "$work/data"
ln -sfn "${PGCOV_MODELS:-$PWD/models/PG-cov}" "$work/models/PG-cov"
python - "$work/params.yaml" <<'EOF'
import copy, sys
import yaml
params = yaml.safe_load(open("params.yaml"))
base = params["models"]["PG-cov"]
base["train"]["copy_target_weight"] = 1.0          # the weight the experiment trained PG-cov with before
models = {"PG-cov": base}
for weight in (2, 3):
    models[f"PGw{weight}"] = copy.deepcopy(base) | {"seeds": [1, 2]}
    models[f"PGw{weight}"]["train"]["copy_target_weight"] = float(weight)
params["models"] = models
params["runs"] = {f"{name}-{seed}": {"model": name, "seed": seed}
                  for name, spec in models.items() for seed in spec.get("seeds", [1, 2, 3])}
params.pop("ensembles", None)
params["extractive"]["systems"] = []                # Lead-3 is evaluate's own baseline
params["train"]["workers"] = 1
params["decode"]["split"] = "valid"
yaml.safe_dump(params, open(sys.argv[1], "w"), sort_keys=False)
EOF
cd "$work"
for run in "PGw2 1" "PGw3 1" "PGw2 2" "PGw3 2"; do
  set -- $run
  sumpipe train --model "$1" --seed "$2"
done
for run in "PG-cov 1" "PG-cov 2" "PG-cov 3" "PGw2 1" "PGw2 2" "PGw3 1" "PGw3 2"; do
  set -- $run
  sumpipe decode --model "$1" --train-seed "$2"
done
sumpipe evaluate
