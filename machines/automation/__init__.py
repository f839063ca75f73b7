"""Automation: the Pulumi program driven from Python, what the autoscaler, the CLI and CI run.

Every function works on a local workspace of this project (``Pulumi.yaml``; stack files in
its ``stackConfigDir``, ``stacks/``) with the engine that ``scripts/install-pulumi`` builds:

* state: ``$PULUMI_BACKEND_URL`` when set, else the git-ignored ``.pulumi-state/`` of the
  project (``file://``), so nothing leaves the machine unless asked;
* secrets: a passphrase, ``$PULUMI_CONFIG_PASSPHRASE`` (or ``_FILE``); the ``local`` stack
  alone falls back to ``LOCAL_PASSPHRASE``, every other stack must be given one;
* engine: ``.pulumi-engine/bin`` and ``.pulumi-engine/home`` (``$PULUMI_HOME`` wins), else a
  ``pulumi`` on ``PATH``;
* project: this checkout, or ``$ORCA_PULUMI_PROJECT`` (a copy, see ``copy_project``).

Pulumi writes a new stack's passphrase salt (``encryptionsalt``) into its stack file, and
config set here rewrites that file (comments kept): commit the salt with the stack. A stack
file that already has one keeps it, so the ``local`` stack's file can carry the salt of
``LOCAL_PASSPHRASE`` and stay unchanged; tests and the demo work on a ``copy_project``.

The engine's output streams to ``on_output`` (default: stderr) while it runs; its failures
become ``EngineError`` with the lines that say why. The only package importing
``pulumi.automation``: ``import machines`` never loads it.
"""

from machines.automation.availability import NoStockError
from machines.automation.cancel import EngineInterrupted
from machines.automation.diff import OPS, Change, Diff, Op, PoolCount
from machines.automation.engine import (
    LOCAL_PASSPHRASE,
    LOCAL_STACK,
    EngineError,
    EngineMissingError,
    StackNotFoundError,
    engine_bin,
)
from machines.automation.engine_output import engine_summary
from machines.automation.operation import OnOutput, print_progress
from machines.automation.project import (
    CHECKOUT,
    ENGINE_DIR,
    INSTALL_HINT,
    STATE_DIR,
    backend_url,
    copy_project,
    project_root,
    scratch_copy,
    stack_file,
)
from machines.automation.snapshot import StackRuntime
from machines.automation.stacks import (
    destroy,
    outputs,
    preview,
    provider,
    refresh,
    resize,
    runtime_env,
    runtime_settings,
    select,
    set_config,
    stack_lock,
    up,
)
from machines.program.fencing import StackAtMaxError
from machines.runtime.settings import (
    ORCA_PULUMI_PROJECT,
    PULUMI_BACKEND_URL,
    PULUMI_CONFIG_PASSPHRASE,
    PULUMI_CONFIG_PASSPHRASE_FILE,
    PULUMI_HOME,
)

__all__ = [
    "CHECKOUT",
    "ENGINE_DIR",
    "INSTALL_HINT",
    "LOCAL_PASSPHRASE",
    "LOCAL_STACK",
    "OPS",
    "ORCA_PULUMI_PROJECT",
    "PULUMI_BACKEND_URL",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "PULUMI_HOME",
    "STATE_DIR",
    "Change",
    "Diff",
    "EngineError",
    "EngineInterrupted",
    "EngineMissingError",
    "NoStockError",
    "OnOutput",
    "Op",
    "PoolCount",
    "StackAtMaxError",
    "StackNotFoundError",
    "StackRuntime",
    "backend_url",
    "copy_project",
    "destroy",
    "engine_bin",
    "engine_summary",
    "outputs",
    "preview",
    "print_progress",
    "project_root",
    "provider",
    "refresh",
    "resize",
    "runtime_env",
    "runtime_settings",
    "scratch_copy",
    "select",
    "set_config",
    "stack_file",
    "stack_lock",
    "up",
]
