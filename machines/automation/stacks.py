"""Stack operations: select, preview, up, destroy, refresh, outputs and configuration."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from pulumi import automation as auto
from pydantic import BaseModel, ConfigDict, ValidationError

from machines.automation.diff import Changes, Diff
from machines.automation.engine import (
    EngineError,
    StackNotFoundError,
    engine_command,
    engine_errors,
    workspace,
)
from machines.automation.project import project_root, shown, stack_file
from machines.errors import SettingsError
from machines.provider import Provider
from machines.settings import ORCA_OWNER, ORCA_PROVIDER

OnOutput = Callable[[str], object]
"""Receives each line the engine prints while it runs."""


def print_progress(line: str) -> None:
    """The default ``on_output``: the engine's progress, line by line, on stderr."""
    print(line, file=sys.stderr, flush=True)


class StackRuntime(BaseModel):
    """What a stack's outputs tell the runtime: provider kind, owner and settings variables."""

    model_config = ConfigDict(frozen=True)

    provider: str
    owner: str
    env: dict[str, str]


def select(stack: str, *, project: str | Path | None = None, create: bool = False) -> auto.Stack:
    """The stack, selected; with ``create``, made first when its stack file exists."""
    root = project_root(project)
    space = workspace(stack, root)
    with engine_errors(stack, "select", root):
        try:
            return auto.Stack.select(stack, space)
        except auto.StackNotFoundError:
            if not create:
                raise
        if not stack_file(stack, root).is_file():
            raise StackNotFoundError(
                f"stack {stack} has no stack file {shown(stack_file(stack, root), root)}: "
                "copy stacks/Pulumi.hetzner-example.yaml to it and edit it"
            )
        return auto.Stack.create(stack, space)


def preview(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> Diff:
    """What ``up`` would change, per resource, without changing anything."""
    selected = select(stack, project=project, create=True)
    collect = Changes()
    with engine_errors(stack, "preview", project):
        selected.preview(on_output=on_output or print_progress, on_event=collect, color="never")
    return collect.diff(stack)


def up(stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None) -> Diff:
    """Make the cloud match the stack's configuration; return what was changed."""
    selected = select(stack, project=project, create=True)
    collect = Changes()
    with engine_errors(stack, "up", project):
        selected.up(on_output=on_output or print_progress, on_event=collect, color="never")
    return collect.diff(stack)


def destroy(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> Diff:
    """Delete every resource of the stack; the stack and its settings stay."""
    selected = select(stack, project=project)
    collect = Changes()
    with engine_errors(stack, "destroy", project):
        selected.destroy(on_output=on_output or print_progress, on_event=collect, color="never")
    return collect.diff(stack)


def refresh(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> dict[str, int]:
    """Read the cloud back into the stack's state; return the engine's counts per op."""
    selected = select(stack, project=project)
    with engine_errors(stack, "refresh", project):
        result = selected.refresh(on_output=on_output or print_progress, color="never")
    changes = result.summary.resource_changes or {}
    return {str(getattr(op, "value", op)): int(n) for op, n in changes.items()}


def outputs(
    stack: str, *, project: str | Path | None = None, show_secrets: bool = False
) -> dict[str, object]:
    """The stack's outputs as plain values; secrets read ``[secret]`` unless ``show_secrets``."""
    root = project_root(project)
    command, env = engine_command(stack, root, need_passphrase=show_secrets)
    args = ["stack", "output", "--json", "--stack", stack]
    if show_secrets:
        args.append("--show-secrets")
    with engine_errors(stack, "outputs", root):
        result = command.run(args, str(root), env)
    values = json.loads(result.stdout or "{}")
    if not isinstance(values, dict):
        raise EngineError(f"stack {stack}: the engine's outputs are not an object")
    return values


def runtime_settings(stack: str, *, project: str | Path | None = None) -> StackRuntime:
    """The runtime's configuration from the stack's ``provider``, ``owner`` and ``env``."""
    values = outputs(stack, project=project)
    try:
        return StackRuntime.model_validate(
            {key: values.get(key) for key in ("provider", "owner", "env")}
        )
    except ValidationError as error:
        missing = sorted({str(e["loc"][0]) for e in error.errors(include_url=False)})
        raise EngineError(
            f"stack {stack} has no usable output {', '.join(missing)}: "
            f"bring it up first (orca-machines up {stack})"
        ) from None


def runtime_env(stack: str, *, project: str | Path | None = None) -> dict[str, str]:
    """The runtime's settings variables (the ``env`` output) plus provider kind and owner."""
    runtime = runtime_settings(stack, project=project)
    return {ORCA_PROVIDER: runtime.provider, ORCA_OWNER: runtime.owner, **runtime.env}


def set_config(
    stack: str,
    values: Mapping[str, object],
    *,
    path: bool = False,
    secret: bool = False,
    project: str | Path | None = None,
) -> None:
    """Set configuration in the stack's file, through the engine (``pulumi config set``).

    Keys are ``namespace:name``; objects and lists are stored as YAML structure. With
    ``path``, keys are paths into a value (``orca-machines:pools[0].size``) and values
    scalars. The file keeps its comments; work on a ``copy_project`` to keep the
    committed stack files as they are.
    """
    root = project_root(project)
    selected = select(stack, project=root, create=True)
    with engine_errors(stack, "config", root):
        if path:
            selected.set_all_config(
                {k: auto.ConfigValue(_scalar(v), secret=secret) for k, v in values.items()},
                path=True,
            )
            return
        entries = {
            key: (
                {"value": value, "secret": secret}
                if isinstance(value, str)
                else {"value": json.dumps(value), "objectValue": value, "secret": secret}
                if isinstance(value, Mapping | list | tuple)
                else {"value": _scalar(value), "secret": secret}
            )
            for key, value in values.items()
        }
        selected.set_all_config_json(json.dumps(entries))


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise SettingsError(f"{type(value).__name__} is not a scalar: set it without path=True")


def provider(stack: str, owner: str | None = None) -> Provider:
    """The runtime provider configured by the stack that made its infrastructure.

    Kind and owner come from the stack's ``provider`` and ``owner`` outputs (``owner``
    overrides), settings from its ``env`` output over this process's environment, which
    still supplies the token. The runtime never reaches up here; this reaches down to it.
    """
    runtime = runtime_settings(stack)
    environ = {**os.environ, **runtime.env}
    return Provider.of(runtime.provider, runtime.owner if owner is None else owner, environ)
