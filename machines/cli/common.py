"""What every command group shares: the program's name, the help epilog, the parser class
and how a command is added (plain, on a stack, on a pool), progress and one-line failures."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from machines.cli.exits import ExitCode
from machines.runtime.clouds import kinds
from machines.runtime.secrets import mask
from machines.runtime.settings import ORCA_OWNER, ORCA_PROVIDER

PROG = "orca-machines"

EPILOG = """\
exit status:
  {OK}    success; for preview: no changes
  {ERROR}    an error (one line on stderr: '{PROG}: error: ...'); status: the cloud could
       not be read (the table still shows what could)
  {CHANGES}    preview: the stack has changes to apply (ci-preview: 0 even with changes,
       1 when a stack's preview failed; preview --expect-no-changes: 1 on changes)
  {NO_STOCK}    create, up, resize: the cloud has no stock of that type in that location now
  {USAGE}   the command line is wrong
  {INTERRUPTED}  interrupted (Ctrl-C); {TERMINATED}: terminated (SIGTERM); during an engine run,
       only once the engine has cancelled cleanly

stack commands run the Pulumi engine of scripts/install-pulumi on this project (stack files
in stacks/). State: $PULUMI_BACKEND_URL, else the project's .pulumi-state/. Secrets:
$PULUMI_CONFIG_PASSPHRASE, required for every stack but 'local'. Project:
$ORCA_PULUMI_PROJECT, else this checkout. The engine's progress goes to stderr.
""".format(PROG=PROG, **ExitCode.__members__)
"""Every command's ``--help`` ends with it: the exit statuses and the engine's settings."""

Run = Callable[[argparse.Namespace], int]
"""A command: its parsed arguments in, its exit status (``ExitCode``) out."""


class UsageError(Exception):
    """The command line is wrong: argparse's complaint, shown as one line."""


class Parser(argparse.ArgumentParser):
    """argparse's parser whose complaints are ``UsageError`` instead of an exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


class Commands:
    """Adds subcommands to the top parser, in the order ``--help`` lists them."""

    def __init__(self, parser: Parser) -> None:
        self._parser = parser
        self._commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(self, name: str, run: Run, text: str) -> Parser:
        """A command of its own arguments."""
        sub: Parser = self._commands.add_parser(
            name,
            help=text,
            description=text,
            epilog=EPILOG,
            formatter_class=self._parser.formatter_class,
        )
        sub.set_defaults(run=run)
        return sub

    def stack_command(self, name: str, run: Run, text: str) -> Parser:
        """A command on one stack: ``STACK`` and ``--quiet`` (no engine progress)."""
        sub = self.command(name, run, text)
        sub.add_argument("stack", metavar="STACK", help="the stack, e.g. local")
        quiet_option(sub)
        return sub

    def pool_command(self, name: str, run: Run, text: str) -> Parser:
        """A command on the runtime API: the cloud by ``--provider`` or ``--stack``, and
        ``--owner``."""
        sub = self.command(name, run, text)
        cloud = sub.add_mutually_exclusive_group()
        cloud.add_argument(
            "--provider",
            choices=kinds(),
            default=os.environ.get(ORCA_PROVIDER) or None,
            help=f"the cloud (default: ${ORCA_PROVIDER}); settings from the environment",
        )
        cloud.add_argument(
            "--stack", metavar="STACK", help="configure from this stack's outputs instead"
        )
        sub.add_argument(
            "--owner",
            default=os.environ.get(ORCA_OWNER),
            help=f"the deployment owning the machines (default: ${ORCA_OWNER}, or the stack's)",
        )
        return sub


def quiet_option(sub: Parser) -> None:
    """``-q``/``--quiet`` of every command that runs the engine."""
    sub.add_argument("-q", "--quiet", action="store_true", help="do not show the engine's progress")


def progress(args: argparse.Namespace) -> Callable[[str], object]:
    """Where the engine's progress goes: stderr, or nowhere with ``--quiet``."""
    if args.quiet:
        return lambda _line: None
    return lambda line: print(line, file=sys.stderr, flush=True)


def say(line: str) -> None:
    """An operation's own line (a pool going on to its next place, a killed run's lock
    released) on stderr, which ``--quiet`` never hides: it hides the engine's progress."""
    print(line, file=sys.stderr, flush=True)


def fail(message: str, status: int = ExitCode.ERROR) -> int:
    """Say ``message`` as one masked line on stderr; return ``status``."""
    line = "; ".join(part.strip() for part in message.splitlines() if part.strip())
    print(f"{PROG}: error: {mask(line)}", file=sys.stderr, flush=True)
    return status
