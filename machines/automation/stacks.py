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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from pulumi import automation as auto

from machines.automation.availability import NoStockError, no_stock_refused, stock_warnings
from machines.automation.checks import check_resize
from machines.automation.diff import Changes, Diff, PoolCount, pool_counts
from machines.automation.engine import (
    EngineError,
    StackNotFoundError,
    engine_command,
    engine_errors,
)
from machines.automation.fencing import max_warnings, stack_fenced
from machines.automation.operation import OnOutput, Operation
from machines.automation.places import PlaceReport, place_counts
from machines.automation.project import (
    STATE_DIR,
    Project,
    fence_env,
    project_root,
    short_name,
)
from machines.automation.recovery import release_stale_locks, settle_pending_creates
from machines.automation.snapshot import StackRuntime, StackSnapshot
from machines.automation.spans import traced
from machines.automation.state import resources
from machines.program.components import POOL_TYPE
from machines.program.config.models import PoolConfig
from machines.program.config.stack_config import PROJECT
from machines.program.pending import pending_creates
from machines.program.placement import Placement, places_out_env
from machines.program.reaper import unordered
from machines.runtime.clouds import stack_environ
from machines.runtime.errors import MachinesError, SettingsError
from machines.runtime.labels import machine_index, machine_key
from machines.runtime.models import Status
from machines.runtime.pool import Place
from machines.runtime.provider import Provider
from machines.runtime.settings import ORCA_OWNER, ORCA_PROVIDER
from machines.runtime.span import SpanningProvider

T = TypeVar("T")


def select(stack: str, *, project: str | Path | None = None, create: bool = False) -> auto.Stack:
    """The stack, selected; with ``create``, made first when its stack file exists."""
    return Operation(stack, project).selected(create=create)


@traced("preview")
def preview(
    stack: str,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    refresh: bool = True,
    on_message: OnOutput | None = None,
) -> Diff:
    """What ``up`` would change, per resource and per pool, without changing anything.

    With ``refresh`` (the default) the engine first reads the cloud, so machines deleted
    behind the stack's back show as created again. ``on_output`` gets the engine's
    progress, ``on_message`` the operation's own lines (default: ``on_output``).
    """
    op = Operation(stack, project, on_output=on_output, on_message=on_message)
    return previewed(op, refresh=refresh)[0]


def previewed(op: Operation, *, refresh: bool = True) -> tuple[Diff, StackSnapshot]:
    """``preview``'s diff and the snapshot of the stack it was counted against, for what
    reads the same stack next (the CI comment's pools and costs)."""
    return _diffed(
        op,
        "preview",
        lambda selected, collect, replace: selected.preview(
            on_output=op.notify,
            on_event=collect,
            color="never",
            refresh=refresh,
            replace=replace or None,
        ),
        create=True,
    )


@traced("up")
def up(
    stack: str,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    refresh: bool = True,
    on_message: OnOutput | None = None,
) -> Diff:
    """Make the cloud match the stack's configuration; return what was changed.

    With ``refresh`` (the default) the engine first reads the cloud, so a machine someone
    deleted is made again instead of failing the update. ``on_output`` gets the engine's
    progress, ``on_message`` the operation's own lines, such as a pool going on to its
    next place (default: ``on_output``).
    """
    op = Operation(stack, project, on_output=on_output, on_message=on_message)
    with stack_lock(stack, op.project):
        return _up(op, refresh=refresh)[0]


def _up(
    op: Operation, *, refresh: bool, target: list[str] | None = None
) -> tuple[Diff, StackSnapshot]:
    """``up``, once more for each place of a pool that spans that the cloud refused a
    machine at for want of stock, which the program then passes over (``ORCA_PLACES_OUT``):
    the stack's machines go to the first place with stock, as far as a create can tell (EC2
    says so only by refusing one). When no place of the pool is left, the ``NoStockError``
    names every place tried."""
    out: list[Place] = []
    attempt = Attempt(Changes())
    while True:
        try:
            return _up_once(op, refresh=refresh, target=target, out=tuple(out), attempt=attempt)
        except NoStockError as error:
            place = error.place
            if place is None or place in out or set(error.pool.places) <= {*out, place}:
                raise
            out.append(place)
            attempt = Attempt(Changes(attempt.changes), attempt.first)
            op.say(
                f"stack {op.stack}: pool {error.pool.name}: {place} {error.why}; up goes on "
                "with the pool's next place"
            )
            op = Operation(
                op.stack,
                op.project,
                on_output=op.notify,
                environ=op.environ,
                command=op.command,
                on_message=op.say,
            )


@dataclass
class Attempt:
    """One run of an ``up`` that may be run again past a refused place: its steps (with
    those of the runs before it) and the stack as the first run found it (``first``, set
    by that run), which the operation's ``Diff`` reports against, so that it says what the
    ``up`` changed in all."""

    changes: Changes
    first: StackSnapshot | None = None


def _up_once(
    op: Operation,
    *,
    refresh: bool,
    target: list[str] | None,
    out: tuple[Place, ...],
    attempt: Attempt,
) -> tuple[Diff, StackSnapshot]:
    return _diffed(
        op,
        "up",
        lambda selected, collect, replace: selected.up(
            on_output=op.notify,
            on_event=collect,
            color="never",
            refresh=refresh,
            target=target,
            target_dependents=bool(target),
            replace=replace or None,
        ),
        create=True,
        out=out,
        attempt=attempt,
    )


@traced("destroy")
def destroy(
    stack: str,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    on_message: OnOutput | None = None,
) -> Diff:
    """Delete every resource of the stack, the autoscaler's machines of its pools too (each
    pool's reaper deletes them); the stack and its settings stay."""
    op = Operation(stack, project, on_output=on_output, on_message=on_message)
    with stack_lock(stack, op.project):
        op.start_engine()
        older = unordered(resources(op.state().deployment))
        if older:
            raise EngineError(
                f"stack {stack}: the reapers of pool(s) {', '.join(older)} were recorded by an "
                "older orca-machines, before a destroy deleted the autoscaler's machines ahead "
                "of the networks, groups and firewalls they use, so this destroy could hang on "
                f"them: run `orca-machines up {stack}` once (it records the order and changes "
                "nothing else), then destroy"
            )
        return _diffed(
            op,
            "destroy",
            lambda selected, collect, _replace: selected.destroy(
                on_output=op.notify,
                on_event=collect,
                color="never",
                refresh=True,
            ),
            create=False,
        )[0]


def _diffed(
    op: Operation,
    action: str,
    run: Callable[[auto.Stack, Changes, list[str]], object],
    *,
    create: bool,
    out: tuple[Place, ...] = (),
    attempt: Attempt | None = None,
) -> tuple[Diff, StackSnapshot]:
    """Run one engine operation on the selected stack, collecting its changes per resource
    and, from the stack's snapshot taken before it, per pool. A preview or an update also
    replaces the stack's machines the cloud could not make (``failed_machines``).

    A stack brought up is listed as its outputs configure the runtime, and a listing that
    fails stops the operation, as the engine's refresh would; one never brought up is
    listed as its file says when it can be (its credentials may be the engine's to
    decrypt: counts unknown).

    An ``up`` run again past a refused place (``attempt``) reports what all its runs
    changed, against the stack as the first found it, its new machines where the last
    placed them.
    """
    op.start_engine()
    deployment = None if action == "destroy" else op.check()
    selected = op.selected(create=create)
    if out:
        selected.workspace.env_vars = {**selected.workspace.env_vars, **places_out_env(out)}
    if action != "preview":
        recover(op)
    taken = op.snapshot(deployment)
    error = taken.error()
    if taken.kept and error is not None:
        raise error
    replace = [] if action == "destroy" else failed_machines(op, taken)
    collect, reported = Changes(), taken
    if attempt is not None:
        attempt.first = reported = attempt.first or taken
        collect = attempt.changes
    with (
        stack_fenced(op.stack, action, taken),
        engine_errors(op.stack, action, op.project),
        no_stock_refused(
            op.stack, action, deployment, partial(failed_place, taken, out), passed=out
        ),
    ):
        _unlocked(op, lambda: run(selected, collect, replace))
    diff = _with_pools(collect.diff(op.stack), reported, out)
    if action == "preview":
        warnings = stock_warnings(diff, taken) + max_warnings(taken)
        diff = diff.model_copy(update={"warnings": warnings})
    return diff, reported


def failed_place(
    taken: StackSnapshot, out: tuple[Place, ...], pool: PoolConfig, key: str
) -> Place | None:
    """Where a failed run was making machine ``key`` of ``pool``, a pool that names its
    places: the place the program gave it, found again as the program finds it (the same
    listing, the same places ``out``); None for another pool."""
    placed = taken.placement(pool, out)
    if placed is None or taken.deployment is None:
        return None
    index = machine_index(key, taken.deployment.owner, pool.name)
    return placed.places[index - 1] if index is not None and index <= len(placed.places) else None


def failed_machines(op: Operation, taken: StackSnapshot) -> list[str]:
    """URNs of the stack's machines the cloud could not make (``Status.FAILED``: a Hetzner
    server whose create action failed stays in the state, off and billed, and the official
    plugin never makes it again), said in one line; empty when there are none."""
    failed = {
        (pool_target(op.stack, pool), machine_key(m.name)): m.name
        for pool, machines in taken.listed.items()
        for m in machines or ()
        if m.managed_by and m.status == Status.FAILED
    }
    if not failed:
        return []
    urns = [
        str(r["urn"])
        for r in resources(op.state().deployment)
        if (str(r.get("parent", "")), str(r.get("urn", "")).rpartition("::")[2]) in failed
    ]
    if urns:
        names = ", ".join(sorted(failed.values()))
        op.say(
            f"stack {op.stack}: replacing {len(urns)} of the stack's machines the cloud could "
            f"not make ({names}: status failed)"
        )
    return urns


@traced("refresh")
def refresh(
    stack: str,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    on_message: OnOutput | None = None,
) -> dict[str, int]:
    """Read the cloud back into the stack's state; return the engine's counts per op."""
    op = Operation(stack, project, on_output=on_output, on_message=on_message)
    with stack_lock(stack, op.project):
        selected = op.selected()
        recover(op)
        return _refreshed(op, selected)


def _refreshed(op: Operation, selected: auto.Stack) -> dict[str, int]:
    """Refresh the stack; the engine's counts per op (its summary event's)."""
    collect = Changes()
    with engine_errors(op.stack, "refresh", op.project):
        _unlocked(
            op,
            lambda: selected.refresh(on_output=op.notify, on_event=collect, color="never"),
        )
    return collect.counts


@traced("resize")
def resize(
    stack: str,
    pool: str,
    size: int,
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    on_message: OnOutput | None = None,
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
    op = Operation(stack, project, on_output=on_output, on_message=on_message)
    index = _pool_index(op, pool)
    check_resize(stack, index, size, op.project, op.settings)  # before the lock
    with stack_lock(stack, op.project):
        op.read_file()  # as it is now, after any resize this one waited for
        op.check()
        selected = op.selected()
        recover(op)
        _refreshed(op, selected)
        _set_config(op, {f"{PROJECT}:pools[{index}].size": size}, path=True)
        op.read_file()
        done, _ = _up(op, refresh=False, target=[pool_target(stack, pool)])
        left = Changes()
        with engine_errors(stack, "preview", op.project):
            selected.preview(on_output=op.notify, on_event=left, color="never", refresh=False)
        return done.model_copy(update={"pending": left.diff(stack).changes})


def recover(op: Operation) -> None:
    """Put right what a killed run left (``machines.automation.recovery``): its lock, when
    its holder is provably gone, and its pending creates, adopted or cleared. Once per
    operation, on the state it read."""
    if op.recovered:
        return
    op.recovered = True
    state = op.state()
    pending = pending_creates(state.deployment)
    if not pending:
        return
    settled, said = settle_pending_creates(
        op.stack, state.deployment, pending, lambda: stack_provider(op)
    )
    selected = op.selected()
    with engine_errors(op.stack, "import", op.project):
        _unlocked(
            op,
            lambda: selected.import_stack(
                auto.Deployment(version=state.version, deployment=settled)
            ),
        )
    op.settle(settled)
    op.say(said)


def _unlocked(op: Operation, run: Callable[[], T]) -> T:
    """``run``, and once more when the stack's lock was held by a run that is gone."""
    try:
        return run()
    except auto.ConcurrentUpdateError as error:
        cancel = partial(op.run, "cancel", "cancel", "--yes", need_passphrase=True)
        if not release_stale_locks(op.stack, str(error), op.say, cancel):
            raise
    return run()


def stack_provider(op: Operation) -> Provider:
    """The runtime provider of the stack: from its outputs, else (a stack whose first
    ``up`` never ended) from its stack file."""
    try:
        runtime = StackRuntime.of(op.stack, op.state().outputs)
    except EngineError:
        deployment = op.deployment()
        runtime = StackRuntime(
            provider=deployment.provider,
            owner=deployment.owner,
            env=deployment.runtime_env(deployment.settings()),
        )
    return op.provider(runtime)


def pool_target(stack: str, pool: str) -> str:
    """The URN of the pool's component: what a resize applies, with its dependents, and the
    parent of the pool's machines."""
    return f"urn:pulumi:{short_name(stack)}::{PROJECT}::{POOL_TYPE}::{pool}"


def _pool_index(op: Operation, pool: str) -> int:
    """Where ``pool`` is in the stack file's pools."""
    config = op.settings.get("config")
    pools = config.get(f"{PROJECT}:pools") if isinstance(config, dict) else None
    names = []
    for index, entry in enumerate(pools if isinstance(pools, list) else []):
        if isinstance(entry, dict):
            names.append(str(entry.get("name")))
            if entry.get("name") == pool:
                return index
    known = ", ".join(names) or "none"
    raise SettingsError(f"stack {op.stack} has no pool {pool!r} (its pools: {known})")


@contextmanager
def stack_lock(stack: str, project: str | Path | Project | None = None) -> Iterator[None]:
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


def last_operation(op: Operation) -> str:
    """The kind of the stack's last engine operation (``update``, ``destroy``, ``refresh``
    ...), from its history; empty for a stack never run or not in the backend. Needs no
    passphrase: it reads the history, not the configuration."""
    if not op.state().exists:
        return ""
    try:
        result = op.run("history", "stack", "history", "--json", "--page-size", "1")
    except StackNotFoundError:
        return ""
    listed = json.loads(result.stdout or "[]")
    first = listed[0] if isinstance(listed, list) and listed else {}
    return str(first.get("kind", "")) if isinstance(first, dict) else ""


def _with_pools(diff: Diff, taken: StackSnapshot, out: tuple[Place, ...] = ()) -> Diff:
    listed = taken.machines()
    if not listed:
        return diff
    counts = pool_counts(diff.changes, taken.owner, listed)
    boots = _boots(taken)
    counts = tuple(
        c.model_copy(update={"boots": boots.get(c.pool, ""), "places": _places(taken, c, out)})
        for c in counts
    )
    return diff.model_copy(update={"pools": counts})


def _places(
    taken: StackSnapshot, count: PoolCount, out: tuple[Place, ...]
) -> tuple[PlaceReport, ...]:
    """Pool ``count``'s counts place by place, for a pool that names its places (in the stack
    file, else as the stack last exported it): where the stack's machines are once the change
    is applied, as the program places them from the same listing and past the places ``out``
    passed over; none for another pool."""
    deployment = taken.deployment
    if not isinstance(taken.provider, SpanningProvider) or deployment is None:
        return ()
    listed = taken.listed.get(count.pool)
    config = next((p for p in deployment.pools if p.name == count.pool), None)
    if config is not None and config.places:
        after = taken.placement(config, out)  # None: counts without where new ones go
        pool = deployment.runtime_pool(config)
        return place_counts(pool, listed, after=after, reaped=bool(count.reaped))
    before = taken.exported_pools.get(count.pool) if config is None else None
    if before is None or not before.places:
        return ()
    return place_counts(before, listed, after=Placement(()), reaped=True)


def _boots(taken: StackSnapshot) -> dict[str, str]:
    """What each pool of the stack file boots when its image is found anew (the runtime
    provider's ``boots``: a selector's snapshot); a pool whose lookup fails is left out
    (the checks before the engine named it)."""
    if taken.provider is None or taken.deployment is None:
        return {}
    found: dict[str, str] = {}
    for pool in taken.deployment.pools:
        try:
            boots = taken.provider.boots(taken.deployment.runtime_pool(pool))
        except MachinesError:
            continue
        if boots:
            found[pool.name] = boots
    return found


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
    fence = fence_env(project)
    return {ORCA_PROVIDER: runtime.provider, ORCA_OWNER: runtime.owner, **runtime.env, **fence}


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
    _set_config(Operation(stack, project), values, path=path, secret=secret)


def _set_config(
    op: Operation, values: Mapping[str, object], *, path: bool = False, secret: bool = False
) -> None:
    selected = op.selected(create=True)
    with engine_errors(op.stack, "config", op.project):
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
    checkout), and that backend holds the fence its pools' ``max`` is counted through over
    every process (``ORCA_FENCE_URL`` overrides: ``fence_env``). The runtime never reaches
    up here; this reaches down to it.
    """
    runtime = runtime_settings(stack, project=project)
    environ = stack_environ(os.environ, {**runtime.env, **fence_env(project)})
    return Provider.of(runtime.provider, runtime.owner if owner is None else owner, environ)
