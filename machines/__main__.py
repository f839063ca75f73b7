"""``python -m machines``: the operator's command line (``machines.cli``)."""

from machines.cli import command

command()
