#!/usr/bin/env bash
# Records docs/decode.txt, the transcript that `sumpipe docs` copies into the `decode` block (docs/usage.md;
# its first command is the README's `decode-example` block): `sumpipe decode` on a docstring and on a news
# story, as a user types them, with the real output of the models this checkout built. Run it from a
# checkout whose `dvc repro` is done (README command 1), with the project's venv active; it writes nothing
# else. tests/docs/test_blocks.py checks that the figures the notes quote are metrics/rouge.json's, so a
# changed result asks for a new transcript.
set -euo pipefail
cd "$(dirname "$0")/.."
export DVC_NO_ANALYTICS=1
out=docs/decode.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/doc.txt" <<'TEXT'
Return a new sorted list from the items in iterable. A custom key function can be supplied to customize
the sort order, and the reverse flag can be set to request the result in descending order.
TEXT
cat > "$work/news.txt" <<'TEXT'
The city council voted on Tuesday to close Main Street to cars every weekend from June, after a year-long
trial in which shops on the street reported more customers and the fire service raised no objection.
The mayor said the decision would be reviewed in two years. Residents of the neighbouring streets, who
had complained about extra traffic during the trial, will be offered free parking permits.
TEXT
run() {  # the command as a user types it in this folder, then its output (stderr's notes first)
  printf '$ sumpipe decode %s\n' "$*"
  local args=("$@")
  args[-1]="$work/${args[-1]}"  # the text's file, here in a temporary folder
  sumpipe decode "${args[@]}" 2>&1
}
{
  printf '$ cat doc.txt\n'; cat "$work/doc.txt"
  run --beam 4 doc.txt
  run --beam 4 --model BERT2S doc.txt
  run --beam 4 --model PG-cov --ensemble doc.txt
  printf '$ cat news.txt\n'; cat "$work/news.txt"
  run --beam 4 news.txt
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "recorded $out; now run: sumpipe docs"
