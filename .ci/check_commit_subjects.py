#!/usr/bin/env python3
"""Commit subjects of at most 72 characters (the project's commit rule), checked two ways.

    check_commit_subjects.py MESSAGE_FILE     the commit-msg hook (.pre-commit-config.yaml): one message
    check_commit_subjects.py --range A..B     CI (.ci/run): every commit in `git log A..B`

The subject is what `git log --format=%s` shows: the message's first paragraph, its lines joined by a
space. A message file is read as git hands it to the hook, before git's clean-up: comment lines (`#`)
and everything below the `git commit -v` scissors line are left out, as git will leave them out. An empty
subject, or one over the limit, fails with one line giving the length and the limit (exit status 1).
Standard library only, so the hook runs with any Python 3, outside the project's virtual environment.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

LIMIT = 72
SCISSORS = "# ------------------------ >8 ------------------------"


def subject_of(message: str) -> str:
    """The subject git will record for `message` (as a message file holds it: comments are dropped)."""
    lines: list[str] = []
    for line in message.splitlines():
        if line.startswith(SCISSORS):
            break
        if line.startswith("#"):
            continue
        line = line.rstrip()
        if not line:
            if lines:
                break  # the end of the first paragraph
            continue  # blank lines before it
        lines.append(line.strip())
    return " ".join(lines)


def problem(subject: str) -> str | None:
    """What is wrong with `subject`, in words; None when it is within the rule."""
    if not subject:
        return "the commit subject is empty"
    if len(subject) > LIMIT:
        return f"the commit subject is {len(subject)} characters, over the limit of {LIMIT}"
    return None


def check_message_file(path: Path) -> int:
    subject = subject_of(path.read_text(encoding="utf-8", errors="replace"))
    found = problem(subject)
    if found is None:
        return 0
    print(f"error: {found} (a short subject, then a blank line and the details in the body)", file=sys.stderr)
    return 1


def subjects(revisions: str) -> list[tuple[str, str]]:
    """(short hash, subject) of every commit in `git log revisions`, newest first."""
    result = subprocess.run(["git", "log", "-z", "--format=%h%x1f%s", revisions, "--"], capture_output=True,
                            check=False)
    if result.returncode != 0:
        why = result.stderr.decode(errors="replace").strip().splitlines()
        raise SystemExit(f"error: cannot list the commits {revisions}: {why[0] if why else 'git log failed'} "
                         "(a shallow clone may lack the base commit: clone the whole history)")
    records = result.stdout.decode("utf-8", errors="replace").split("\0")
    pairs = [record.split("\x1f", 1) for record in records if record]
    return [(commit, subject) for commit, subject in pairs]


def check_range(revisions: str) -> int:
    commits = subjects(revisions)
    bad = [(commit, subject, found) for commit, subject in commits if (found := problem(subject)) is not None]
    if not bad:
        print(f"commit subjects: {_commits(len(commits))} in {revisions}, each subject at most {LIMIT} characters")
        return 0
    print(f"error: {len(bad)} of the {_commits(len(commits))} in {revisions} break the subject rule "
          f"(at most {LIMIT} characters, not empty):", file=sys.stderr)
    for commit, subject, found in bad:
        print(f"  {commit}: {found}" + (f": {subject}" if subject else ""), file=sys.stderr)
    return 1


def _commits(n: int) -> str:
    return f"{n} commit" if n == 1 else f"{n} commits"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Check that commit subjects are 1-{LIMIT} characters long.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("message_file", nargs="?", type=Path, help="a commit message file (the commit-msg hook)")
    group.add_argument("--range", dest="revisions", metavar="BASE..HEAD", help="every commit of a revision range")
    args = parser.parse_args(argv)
    if args.revisions is not None:
        return check_range(args.revisions)
    return check_message_file(args.message_file)


if __name__ == "__main__":
    sys.exit(main())
