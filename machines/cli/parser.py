"""The whole command line, each group's commands added in the order ``--help`` lists them:
stack commands (with CI's and the reports between), then pool commands."""

from __future__ import annotations

import argparse

from machines.cli import ci, pools, reports, stacks
from machines.cli.common import EPILOG, PROG, Commands, Parser


def build_parser() -> argparse.ArgumentParser:
    """The command line: stack commands, then pool commands."""
    parser = Parser(
        prog=PROG,
        description="Cloud machines for orca's autoscaler: stacks through Pulumi, pools "
        "through the runtime API.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = Commands(parser)
    stacks.add_up_and_preview(commands)
    ci.add_ci_preview_and_drift(commands)
    reports.add_status(commands)
    stacks.add_destroy_refresh_resize(commands)
    reports.add_outputs_and_env(commands)
    pools.add_machine_commands(commands)
    pools.add_metrics(commands)
    return parser
