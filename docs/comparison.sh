#!/usr/bin/env bash
# Records docs/comparison.txt, the transcript that `sumpipe docs` copies into the `comparison` blocks:
# the README's comparison steps, as a user types them, with their real output. Run it from a checkout whose
# `dvc repro` is done (README command 1), with the project's venv active: the experiment re-decodes every run
# and re-evaluates (minutes). At the end the baseline is applied again (`dvc exp apply`); both experiments
# stay in `dvc exp list`.
set -euo pipefail
cd "$(dirname "$0")/.."
export DVC_NO_ANALYTICS=1
out=docs/comparison.txt
tmp=$(mktemp)   # outside the workspace: dvc exp save and apply leave it alone
name=${1:-lp1}

say() { printf '$ %s\n' "$1"; }
dvc exp remove baseline "$name" >/dev/null 2>&1 || true   # a new recording replaces the last one's
{
  say "dvc exp save -n baseline"
  dvc exp save -f -n baseline 2>&1
  echo
  say "dvc exp run -n $name -S decode.length_penalty=1.0"
  start=$(date +%s)
  dvc exp run -n "$name" -S decode.length_penalty=1.0 2>&1 | grep -E "^(Ran experiment|Experiment results|To promote)" || true
  echo "# $(( $(date +%s) - start )) s" >&2
  echo
  say "dvc exp show                # a 120-column terminal shows the first 120 columns (less -S)"
  COLUMNS=120 dvc exp show 2>&1 | python3 -c "import sys; print('\\n'.join(line.rstrip('\\n')[:120] for line in sys.stdin))"
  echo
  say "sumpipe compare baseline $name --system M1 --system M2 --system PG-cov"
  sumpipe compare baseline "$name" --system M1 --system M2 --system PG-cov 2>&1
  echo
  say "dvc params diff"
  dvc params diff 2>&1
} > "$tmp"
dvc exp apply baseline   # back to the baseline's files (the transcript is outside them until it is moved in)
mv "$tmp" "$out"
echo "recorded $out; now run: sumpipe docs"
