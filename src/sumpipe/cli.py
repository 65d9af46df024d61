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
from sumpipe.extractive import commands as extractive_commands
from sumpipe.options import Command, Group, flag
from sumpipe.report import commands as report_commands
from sumpipe.selection import commands as selection_commands
from sumpipe.studies import commands as study_commands
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
app.command("predict", cls=Command)(decode_commands.predict)
app.command("evaluate", cls=Command)(evaluate_commands.evaluate)
app.command("rouge", cls=Command)(evaluate_commands.rouge)
app.command("crosseval", cls=Command)(evaluate_commands.crosseval)
app.command("compare", cls=Command)(evaluate_commands.compare)
app.command("report", cls=Command)(report_commands.report)
app.command("docs", cls=Command)(docs_commands.docs)
app.add_typer(study_commands.numerals, name="numerals")
app.command("sweep", cls=Command)(study_commands.sweep)
app.command("decoding", cls=Command)(study_commands.decoding)
app.command("meta-eval", cls=Command)(study_commands.meta_eval)


def _fail(message: str, code: int = 1) -> None:
    """One `error:` line on stderr (escaped: whatever it quotes, it is one line of plain text), then exit."""
    from sumpipe.terminal import printable

    typer.echo(f"error: {printable(message)}", err=True)
    sys.exit(code)


def _ppid_of(pid: int) -> int | None:
    """The parent of process `pid` (Linux /proc), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


SHELLS = {b"sh", b"bash", b"dash", b"zsh", b"fish", b"ksh"}


def _stop_with_dvc(interval: float = 0.5) -> None:
    """Under `dvc repro` (DVC sets DVC_STAGE), end when DVC ends. DVC runs a stage's command as a child
    (through a shell that usually execs it) and does not pass on a SIGTERM it receives (from `timeout`,
    a cancelled CI job): without this, `sumpipe train` would go on as an orphan and rewrite the model
    folder after DVC has reported the failure. A daemon thread notices DVC (the parent, or the
    grandparent when the parent is a shell still waiting) is gone and ends this process as SIGTERM
    would (the atomic writes keep every artifact whole; training resumes from its checkpoint)."""
    import os
    import signal
    import threading

    if "DVC_STAGE" not in os.environ or not os.path.isdir("/proc"):
        return
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/comm", "rb") as f:
            shell = f.read().strip() in SHELLS
    except OSError:
        shell = False
    grandparent = _ppid_of(parent) if shell else None

    def watch() -> None:
        while True:
            if os.getppid() != parent or (grandparent is not None and _ppid_of(parent) != grandparent):
                typer.echo("error: dvc ended (killed or interrupted): stopping this stage with it", err=True)
                os.kill(os.getpid(), signal.SIGTERM)
                return
            threading.Event().wait(interval)

    threading.Thread(target=watch, name="stop-with-dvc", daemon=True).start()


# True once `main` runs: this process is a command's, whose modules live until it exits, so `sumpipe.device`
# loads torch with the garbage collector paused and then freezes its objects (the docstring there)
COMMAND_LINE = False


def main() -> None:
    """Console-script entry point: run the app, reporting user errors in one line.

    Click's own usage errors (a bad option value, a missing argument) are user errors too: they get
    the same one `error:` line (and click's exit status 2) instead of a multi-line usage panel. So do
    a stdout that refuses the output (closed, a full disk, a reader that went away) and running out
    of memory. The error line is escaped (`sumpipe.terminal.printable`): a file name or a card's
    string it quotes cannot put control sequences on the terminal.
    """
    from sumpipe.errors import SumpipeError
    from sumpipe.terminal import StdoutError, checked_stdout, silence_stdout

    global COMMAND_LINE
    COMMAND_LINE = True
    if sys.stdout is None:  # the shell closed fd 1 (`>&-`): every result would vanish, exit 0
        _fail("stdout is closed (`>&-`); sumpipe prints its results there: redirect it to a file or /dev/null")
    _stop_with_dvc()
    try:
        with checked_stdout():  # a full disk behind `> file` is a StdoutError, flushed before leaving
            code = app(standalone_mode=False)
    except StdoutError as exc:
        silence_stdout()  # what stdout still holds must not fail again at exit
        _fail(str(exc))
    except SumpipeError as exc:
        _fail(str(exc))
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except typer.TyperException as exc:  # click.UsageError and its kin
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if message:  # empty for "no arguments": the help text has been printed already
            _fail(f"{message} (see --help)", getattr(exc, "exit_code", 2))
        sys.exit(getattr(exc, "exit_code", 2))
    except MemoryError:
        _fail("out of memory: the input needs more than this machine (or its memory limit) has; "
              "docs/reliability.md#limits lists what sumpipe reads")
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":  # `python -m sumpipe.cli`: the console script's `main`, in the module of that name
    from sumpipe.cli import main as console_main

    console_main()
