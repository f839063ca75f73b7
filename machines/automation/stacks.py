"""Stack operations: select, preview, up, destroy, refresh, resize, outputs and configuration.

``preview`` and ``up`` refresh first by default: the autoscaler's deletions and creations
are drift the engine must see. ``up``, ``destroy``, ``refresh`` and ``resize`` of one stack
queue on a file lock (``stack_lock``), so callers in several threads or processes all
succeed instead of meeting the engine's "another update is in progress". Before they run,
they put right what a killed run left (``recover``: a lock whose holder is gone, pending
creates), saying so in one line each.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pulumi import automation as auto

from machines.automation.checks import check, check_resize, deployment_of
from machines.automation.diff import Changes, Diff, pool_counts
from machines.automation.engine import (
    WHERE_HINT,
    EngineError,
    StackNotFoundError,
    engine_command,
    engine_errors,
    workspace,
)
from machines.automation.project import (
    STATE_DIR,
    backend_url,
    project_root,
    read_yaml,
    short_name,
    shown,
    stack_file,
)
from machines.automation.recovery import release_stale_locks, settle_pending_creates
from machines.automation.snapshot import StackRuntime, StackSnapshot, take
from machines.automation.spans import traced
from machines.automation.stock import no_stock_refused, stock_warnings
from machines.program.components import POOL_TYPE
from machines.program.config.models import BaseDeployment
from machines.program.config.stack_config import PROJECT
from machines.program.pending import pending_creates
from machines.runtime.errors import SettingsError
from machines.runtime.labels import machine_key
from machines.runtime.models import Status
from machines.runtime.provider import Provider
from machines.runtime.settings import ORCA_OWNER, ORCA_PROVIDER

OnOutput = Callable[[str], object]
"""Receives each line the engine prints while it runs."""

T = TypeVar("T")


def print_progress(line: str) -> None:
    """The default ``on_output``: the engine's progress, line by line, on stderr."""
    print(line, file=sys.stderr, flush=True)


def select(stack: str, *, project: str | Path | None = None, create: bool = False) -> auto.Stack:
    """The stack, selected; with ``create``, made first when its stack file exists."""
    root = project_root(project)
    if not stack_file(stack, root).is_file() and not in_backend(stack, root):
        raise StackNotFoundError(
            f"stack {stack} does not exist: it is not in {backend_url(root)} and has no "
            f"stack file {shown(stack_file(stack, root), root)} in {root}; to make it, copy "
            f"stacks/Pulumi.hetzner-example.yaml to that file and edit it, or {WHERE_HINT}"
        )
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


def in_backend(stack: str, root: Path) -> bool:
    """Whether the backend has ``stack``: asked before any passphrase is, since listing
    stacks needs none and a missing stack should say so, not ask for a secret."""
    command, env = engine_command(stack, root, need_passphrase=False)
    with engine_errors(stack, "select", root):
        result = command.run(["stack", "ls", "--json"], str(root), env)
    listed = json.loads(result.stdout or "[]")
    names = {str(entry.get("name", "")) for entry in listed if isinstance(entry, dict)}
    return stack in names or short_name(stack) in names


@traced("preview")
def preview(
    stack: str,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    refresh: bool = True,
) -> Diff:
    """What ``up`` would change, per resource and per pool, without changing anything.

    With ``refresh`` (the default) the engine first reads the cloud, so machines deleted
    behind the stack's back show as created again.
    """
    return preview_with_snapshot(stack, project=project, on_output=on_output, refresh=refresh)[0]


def preview_with_snapshot(
    stack: str,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    refresh: bool = True,
) -> tuple[Diff, StackSnapshot]:
    """``preview``'s diff and the snapshot of the stack it was counted against, for what
    reads the same stack next (the CI comment's pools and costs)."""
    return _diffed(
        stack,
        project,
        "preview",
        lambda selected, collect, replace: selected.preview(
            on_output=on_output or print_progress,
            on_event=collect,
            color="never",
            refresh=refresh,
            replace=replace or None,
        ),
        create=True,
        on_output=on_output,
    )


@traced("up")
def up(
    stack: str,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    refresh: bool = True,
) -> Diff:
    """Make the cloud match the stack's configuration; return what was changed.

    With ``refresh`` (the default) the engine first reads the cloud, so a machine someone
    deleted is made again instead of failing the update.
    """
    with stack_lock(stack, project):
        return _up(stack, project, on_output, refresh=refresh)[0]


def _up(
    stack: str,
    project: str | Path | None,
    on_output: OnOutput | None,
    *,
    refresh: bool,
    target: list[str] | None = None,
) -> tuple[Diff, StackSnapshot]:
    return _diffed(
        stack,
        project,
        "up",
        lambda selected, collect, replace: selected.up(
            on_output=on_output or print_progress,
            on_event=collect,
            color="never",
            refresh=refresh,
            target=target,
            target_dependents=bool(target),
            replace=replace or None,
        ),
        create=True,
        on_output=on_output,
    )


@traced("destroy")
def destroy(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> Diff:
    """Delete every resource of the stack, the autoscaler's machines of its pools too (each
    pool's reaper deletes them); the stack and its settings stay."""
    with stack_lock(stack, project):
        return _diffed(
            stack,
            project,
            "destroy",
            lambda selected, collect, _replace: selected.destroy(
                on_output=on_output or print_progress,
                on_event=collect,
                color="never",
                refresh=True,
            ),
            create=False,
            on_output=on_output,
        )[0]


def _diffed(
    stack: str,
    project: str | Path | None,
    action: str,
    run: Callable[[auto.Stack, Changes, list[str]], object],
    *,
    create: bool,
    on_output: OnOutput | None = None,
) -> tuple[Diff, StackSnapshot]:
    """Run one engine operation on the selected stack, collecting its changes per resource
    and, from the stack's snapshot taken before it, per pool. A preview or an update also
    replaces the stack's machines the cloud could not make (``failed_machines``).

    A stack brought up is listed as its outputs configure the runtime, and a listing that
    fails stops the operation, as the engine's refresh would; one never brought up is
    listed as its file says when it can be (its credentials may be the engine's to
    decrypt: counts unknown).
    """
    deployment = None if action == "destroy" else check(stack, project)
    selected = select(stack, project=project, create=create)
    notify = on_output or print_progress
    if action != "preview":
        recover(stack, selected, project, notify)
    taken = snapshot_of(stack, project, deployment)
    error = taken.error()
    if taken.kept and error is not None:
        raise error
    replace = [] if action == "destroy" else failed_machines(stack, selected, taken, notify)
    collect = Changes()
    with engine_errors(stack, action, project), no_stock_refused(stack, action, deployment):
        _unlocked(stack, project, notify, lambda: run(selected, collect, replace))
    diff = _with_pools(collect.diff(stack), taken)
    if action == "preview":
        diff = diff.model_copy(update={"warnings": stock_warnings(diff, taken)})
    return diff, taken


def failed_machines(
    stack: str, selected: auto.Stack, taken: StackSnapshot, notify: OnOutput
) -> list[str]:
    """URNs of the stack's machines the cloud could not make (``Status.FAILED``: a Hetzner
    server whose create action failed stays in the state, off and billed, and the official
    plugin never makes it again), said in one line; empty when there are none."""
    failed = {
        (pool_target(stack, pool), machine_key(m.name)): m.name
        for pool, machines in taken.listed.items()
        for m in machines or ()
        if m.managed_by and m.status == Status.FAILED
    }
    if not failed:
        return []
    with engine_errors(stack, "export", None):
        resources = (selected.export_stack().deployment or {}).get("resources") or []
    urns = [
        str(r["urn"])
        for r in resources
        if isinstance(r, dict)
        and (str(r.get("parent", "")), str(r["urn"]).rpartition("::")[2]) in failed
    ]
    if urns:
        names = ", ".join(sorted(failed.values()))
        notify(
            f"stack {stack}: replacing {len(urns)} of the stack's machines the cloud could not "
            f"make ({names}: status failed)"
        )
    return urns


@traced("refresh")
def refresh(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> dict[str, int]:
    """Read the cloud back into the stack's state; return the engine's counts per op."""
    notify = on_output or print_progress
    with stack_lock(stack, project):
        selected = select(stack, project=project)
        recover(stack, selected, project, notify)
        with engine_errors(stack, "refresh", project):
            result = _unlocked(
                stack, project, notify, lambda: selected.refresh(on_output=notify, color="never")
            )
    changes = result.summary.resource_changes or {}
    return {str(getattr(op, "value", op)): int(n) for op, n in changes.items()}


@traced("resize")
def resize(
    stack: str,
    pool: str,
    size: int,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
) -> Diff:
    """Set ``pool``'s ``size`` in the stack's configuration and apply that pool only.

    The update targets the pool's component and its dependents (its machines and reaper,
    the ones to create too); the engine includes providers by itself. Changes elsewhere in
    the stack (another pool's type, shared infrastructure) stay pending: a preview after
    the update finds them, and the returned diff's ``pending`` names them.

    Calls for one stack queue on its lock and each succeeds; one that waited applies the
    configuration as it finds it, so sizes set while it waited may be applied with it. The
    stack is refreshed first, whole: the engine here refuses a targeted refresh ("unknown
    provider"), and a refresh only reads, so the update still touches this pool alone.
    """
    if size < 0:
        raise SettingsError(f"size {size} of pool {pool} is below zero: give 0 or more")
    root = project_root(project)
    index = _pool_index(stack, pool, root)
    check_resize(stack, index, size, root)  # before the lock: a refusal waits for no run
    with stack_lock(stack, root):
        check(stack, root)
        selected = select(stack, project=root)
        notify = on_output or print_progress
        recover(stack, selected, root, notify)
        with engine_errors(stack, "refresh", root):
            _unlocked(
                stack, root, notify, lambda: selected.refresh(on_output=notify, color="never")
            )
        set_config(stack, {f"{PROJECT}:pools[{index}].size": size}, path=True, project=root)
        done, _ = _up(stack, root, on_output, refresh=False, target=[pool_target(stack, pool)])
        left = Changes()
        with engine_errors(stack, "preview", root):
            selected.preview(
                on_output=on_output or print_progress,
                on_event=left,
                color="never",
                refresh=False,
            )
        return done.model_copy(update={"pending": left.diff(stack).changes})


def recover(stack: str, selected: auto.Stack, project: str | Path | None, notify: OnOutput) -> None:
    """Put right what a killed run left (``machines.automation.recovery``): its lock, when
    its holder is provably gone, and its pending creates, adopted or cleared."""
    root = project_root(project)
    with engine_errors(stack, "export", root):
        exported = selected.export_stack()
    pending = pending_creates(exported.deployment or {})
    if not pending:
        return
    settled, said = settle_pending_creates(
        stack, exported.deployment or {}, pending, lambda: stack_provider(stack, root)
    )
    with engine_errors(stack, "import", root):
        _unlocked(
            stack,
            root,
            notify,
            lambda: selected.import_stack(
                auto.Deployment(version=exported.version, deployment=settled)
            ),
        )
    notify(said)


def _unlocked(stack: str, project: str | Path | None, notify: OnOutput, run: Callable[[], T]) -> T:
    """``run``, and once more when the stack's lock was held by a run that is gone."""
    try:
        return run()
    except auto.ConcurrentUpdateError as error:
        if not release_stale_locks(stack, project_root(project), str(error), notify):
            raise
    return run()


def stack_provider(stack: str, project: str | Path | None = None) -> Provider:
    """The runtime provider of the stack: from its outputs, else (a stack whose first
    ``up`` never ended) from its stack file."""
    try:
        runtime = runtime_settings(stack, project=project)
    except EngineError:
        deployment = deployment_of(stack, project)
        environ = {**os.environ, **deployment.env()}
        return Provider.of(deployment.provider, deployment.owner, environ)
    return Provider.of(runtime.provider, runtime.owner, {**os.environ, **runtime.env})


def pool_target(stack: str, pool: str) -> str:
    """The URN of the pool's component: what a resize applies, with its dependents, and the
    parent of the pool's machines."""
    return f"urn:pulumi:{short_name(stack)}::{PROJECT}::{POOL_TYPE}::{pool}"


def _pool_index(stack: str, pool: str, root: Path) -> int:
    """Where ``pool`` is in the stack file's pools."""
    config = read_yaml(stack_file(stack, root)).get("config")
    pools = config.get(f"{PROJECT}:pools") if isinstance(config, dict) else None
    names = []
    for index, entry in enumerate(pools if isinstance(pools, list) else []):
        if isinstance(entry, dict):
            names.append(str(entry.get("name")))
            if entry.get("name") == pool:
                return index
    known = ", ".join(names) or "none"
    raise SettingsError(f"stack {stack} has no pool {pool!r} (its pools: {known})")


@contextmanager
def stack_lock(stack: str, project: str | Path | None = None) -> Iterator[None]:
    """Hold the stack's file lock: operations on one stack from several threads or
    processes of this project wait their turn (``.pulumi-state/locks/<stack>.lock``)."""
    locks = project_root(project) / STATE_DIR / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{short_name(stack)}.lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def outputs_now(stack: str, project: str | Path | None = None) -> dict[str, object]:
    """The stack's outputs; empty for a stack not brought up."""
    try:
        return outputs(stack, project=project)
    except StackNotFoundError:
        return {}


def last_operation(stack: str, project: str | Path | None = None) -> str:
    """The kind of the stack's last engine operation (``update``, ``destroy``, ``refresh``
    ...), from its history; empty for a stack never run or not in the backend. Needs no
    passphrase: it reads the history, not the configuration."""
    root = project_root(project)
    command, env = engine_command(stack, root, need_passphrase=False)
    args = ["stack", "history", "--json", "--page-size", "1", "--stack", stack]
    try:
        with engine_errors(stack, "history", root):
            result = command.run(args, str(root), env)
    except StackNotFoundError:
        return ""
    listed = json.loads(result.stdout or "[]")
    first = listed[0] if isinstance(listed, list) and listed else {}
    return str(first.get("kind", "")) if isinstance(first, dict) else ""


def snapshot_of(
    stack: str,
    project: str | Path | None = None,
    deployment: BaseDeployment | None = None,
    environ: Mapping[str, str] | None = None,
) -> StackSnapshot:
    """The stack now (``machines.automation.snapshot``): its outputs read once, each pool of
    its state and of ``deployment`` (its file) listed by one provider, its settings over
    ``environ`` (default: this process's). Listing needs the cloud's credentials, as the
    preview's refresh does."""
    env = os.environ if environ is None else environ
    return take(stack, deployment, outputs_now(stack, project), env)


def _with_pools(diff: Diff, taken: StackSnapshot) -> Diff:
    listed = taken.machines()
    if not listed:
        return diff
    return diff.model_copy(update={"pools": pool_counts(diff.changes, taken.owner, listed)})


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
    return StackRuntime.of(stack, outputs(stack, project=project))


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


def provider(
    stack: str, owner: str | None = None, *, project: str | Path | None = None
) -> Provider:
    """The runtime provider configured by the stack that made its infrastructure.

    Kind and owner come from the stack's ``provider`` and ``owner`` outputs (``owner``
    overrides), settings from its ``env`` output over this process's environment, which
    still supplies the token. The stack is found in ``$PULUMI_BACKEND_URL`` (else the
    project's ``.pulumi-state``) of ``project`` (else ``$ORCA_PULUMI_PROJECT``, else this
    checkout). The runtime never reaches up here; this reaches down to it.
    """
    runtime = runtime_settings(stack, project=project)
    environ = {**os.environ, **runtime.env}
    return Provider.of(runtime.provider, runtime.owner if owner is None else owner, environ)
