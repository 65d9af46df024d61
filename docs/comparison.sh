#!/usr/bin/env bash
# Records docs/comparison.txt, the transcript that `sumpipe docs` copies into the `comparison` block
# (docs/usage.md): one DVC experiment and the three commands that compare it, as a user types them, with
# their real output.
# Run it from a checkout whose `dvc repro` is done and committed (README command 1; `dvc status` clean), with
# the project's venv active: the experiment re-decodes every run and re-evaluates (minutes). At the end the
# workspace is put back as it was (git checkout, dvc checkout); the experiment stays in `dvc exp list`.
set -euo pipefail
cd "$(dirname "$0")/.."
export DVC_NO_ANALYTICS=1
out=docs/comparison.txt
name=${1:-lp1}

say() { printf '$ %s\n' "$1"; }
{
  say "dvc exp run -n $name -S decode.length_penalty=1.0"
  dvc exp run -n "$name" -S decode.length_penalty=1.0 2>&1 | grep -E "^(Ran experiment|Experiment results|To promote)" || true
  echo
  say "dvc exp show                # no option; a 120-column terminal shows the first 120 columns (less -S)"
  COLUMNS=120 dvc exp show 2>&1 | python3 -c "import sys; print('\\n'.join(line.rstrip('\\n')[:120] for line in sys.stdin))"
  echo
  say "sumpipe compare HEAD $name --system M1 --system M2 --system PG-cov"
  sumpipe compare HEAD "$name" --system M1 --system M2 --system PG-cov 2>&1
  echo
  say "dvc params diff"
  dvc params diff 2>&1
} > "$out.tmp"
mv "$out.tmp" "$out"
git checkout -- params.yaml dvc.lock metrics reports
dvc checkout -q
echo "recorded $out; now run: sumpipe docs"
