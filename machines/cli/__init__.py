"""The operator's command line, ``orca-machines`` (``python -m machines``).

Stack commands drive the Pulumi program through ``machines.automation``; pool commands call
the runtime API the autoscaler uses, configured by flags or by a stack's outputs. Every
failure is one line on stderr and a non-zero status, never a traceback; tokens and user
data are never printed.

=====================  ==================================================================
``entry``              ``command`` (the console script), ``main``: parse, run, fail once
``exits``              ``ExitCode``: every exit status the CLI gives
``common``             ``PROG``, ``EPILOG``, ``Commands`` (plain, stack and pool commands),
                       ``progress``, ``fail``
``failures``           a failure's one line (``explain``) and status; SIGTERM's handler
``parser``             ``build_parser``: every group's commands, in ``--help``'s order
``stacks``             ``up``, ``preview``, ``destroy``, ``refresh``, ``resize``
``reports``            ``status``, ``outputs``, ``env``
``ci``                 ``ci-preview``, ``drift``
``pools``              ``ls``, ``create``, ``rm``, ``arch``, ``metrics``
``table``              the machine table of ``ls`` and ``create``
=====================  ==================================================================
"""

from machines.cli.entry import command, main
from machines.cli.parser import build_parser

__all__ = ["build_parser", "command", "main"]
