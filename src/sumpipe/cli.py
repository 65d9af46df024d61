"""The `sumpipe` command line: one command per DVC stage, plus `rouge` for ad-hoc scoring.

Each package owns a small `commands` module with thin Typer commands that load params.yaml,
call the stage's plain function and print a summary; heavy imports (torch, pandas) happen inside
those commands so `sumpipe --help` stays fast. `main` turns every `SumpipeError` into a one-line
message on stderr and exit status 1, never a traceback.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from sumpipe.data import commands as data_commands
from sumpipe.decode import commands as decode_commands
from sumpipe.docs import commands as docs_commands
from sumpipe.evaluate import commands as evaluate_commands
from sumpipe.experiments import commands as experiment_commands
from sumpipe.extractive import commands as extractive_commands
from sumpipe.options import Command, Group, flag
from sumpipe.report import commands as report_commands
from sumpipe.selection import commands as selection_commands
from sumpipe.subword import commands as subword_commands
from sumpipe.text import commands as text_commands
from sumpipe.train import commands as train_commands
from sumpipe.vocab import commands as vocab_commands

app = typer.Typer(
    name="sumpipe",
    cls=Group,
    help="Reproducible text summarization: DVC stages from raw text to ROUGE reports.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

def _print_version(value: bool) -> None:
    if value:
        from sumpipe import __version__

        typer.echo(f"sumpipe {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, flag("--version", help="print the version and exit", callback=_print_version,
                                  is_eager=True)] = False,
) -> None:
    """Reproducible text summarization: DVC stages from raw text to ROUGE reports."""


app.command("download", cls=Command)(data_commands.download)
app.command("preprocess", cls=Command)(text_commands.preprocess)
app.command("vocab", cls=Command)(vocab_commands.vocab)
app.command("extract", cls=Command)(selection_commands.extract)
app.command("extractive-fit", cls=Command)(extractive_commands.extractive_fit)
app.command("extractive", cls=Command)(extractive_commands.extractive)
app.command("summarize", cls=decode_commands.SummarizeCommand)(decode_commands.summarize)
app.command("subword", cls=Command)(subword_commands.subword)
app.command("pretrain", cls=Command)(train_commands.pretrain)
app.command("train", cls=Command)(train_commands.train)
app.command("decode", cls=Command)(decode_commands.decode)
app.command("evaluate", cls=Command)(evaluate_commands.evaluate)
app.command("rouge", cls=Command)(evaluate_commands.rouge)
app.command("crosseval", cls=Command)(evaluate_commands.crosseval)
app.command("compare", cls=Command)(evaluate_commands.compare)
app.command("report", cls=Command)(report_commands.report)
app.command("docs", cls=Command)(docs_commands.docs)
app.add_typer(experiment_commands.numerals, name="numerals")
app.command("sweep", cls=Command)(experiment_commands.sweep)


def main() -> None:
    """Console-script entry point: run the app, reporting user errors in one line.

    Click's own usage errors (a bad option value, a missing argument) are user errors too: they get
    the same one `error:` line (and click's exit status 2) instead of a multi-line usage panel.
    """
    from sumpipe.errors import SumpipeError

    try:
        code = app(standalone_mode=False)
    except SumpipeError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except typer.TyperException as exc:  # click.UsageError and its kin
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if message:  # empty for "no arguments": the help text has been printed already
            typer.echo(f"error: {message} (see --help)", err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main()
