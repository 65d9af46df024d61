"""sumpipe.docs: the figures and lists of README.md and docs/ that cannot go stale (`sumpipe docs`).

`generated` finds the marked blocks of a Markdown file (markdown-it) and rewrites them; `blocks`
holds one renderer per block name, each a small function of the project's `metrics/`, params and
registries; `commands` is the command.
"""
