"""What a preview or an update changes, per resource, collected from the engine's events,
and per pool, the machines it keeps, the autoscaler made, and the change deletes.

Property names only, never values: a diff is safe to post on a pull request.

The per-pool API, for CI and other readers (kept small on purpose):

* ``Diff.pools``: one ``PoolCount`` per pool of the stack's state, in its order;
* ``PoolCount.kept``: machines the stack keeps (``orca-managed-by=pulumi``), not deleting;
* ``PoolCount.autoscaled``: machines the autoscaler made, not deleting;
* ``PoolCount.deletes``: machines the change deletes, the stack's and, when the pool leaves
  the stack (its reaper is deleted), every one of the autoscaler's;
* ``PoolCount.reaped``: the names of the autoscaler's machines the change deletes;
* ``PoolCount.creates``: the stack's machines the change creates (``kept_after`` follows);
* ``PoolCount.renamed``: the stack's machines named by the old rule (``<owner>-<pool>-<n>``)
  that the change renames in place to ``<owner>-<pool>-<n>.stack`` (same machine, same host
  name; an update, not a replacement);
* ``Diff.machines()``: those counts over every pool, the line ``up`` and ``destroy`` print;
* ``Diff.report()["pools"]`` is the same as JSON, ``Diff.markdown()`` shows it as a table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pulumi import automation as auto
from pydantic import BaseModel, ConfigDict

from machines.automation.notices import notices, notices_text
from machines.automation.places import PlaceReport
from machines.program.clouds import machine_resources
from machines.program.reaper import REAPER_TYPE, reaper_name
from machines.runtime.labels import is_machine_key, is_stack_name
from machines.runtime.models import Machine, Status
from machines.runtime.reaping import autoscaled

Op = Literal["create", "update", "replace", "delete"]
OPS: tuple[Op, ...] = ("create", "update", "replace", "delete")

_OPS: Mapping[str, Op] = {
    "create": "create",
    "import": "create",
    "update": "update",
    "replace": "replace",
    "create-replacement": "replace",
    "delete-replaced": "replace",
    "import-replacement": "replace",
    "delete": "delete",
    "discard": "delete",
}
"""The engine's step ops folded into the four a reviewer cares about; others are not changes."""

_KEYED = frozenset({"update", "replace"})
PENDING_SHOWN = 5
"""How many pending changes ``Diff.pending_note`` names before it says there are more."""
PROVIDER_TYPE = "pulumi:providers:"
DEFAULT_PROVIDER = "default"
"""A default provider (``pulumi:providers:hcloud::default_1_39_1``, one per plugin the
stack uses without naming a provider): a step of the engine's own that it neither shows nor
counts (its ``isDefaultProviderStep``). Every other step is a change, the stack's own
(``pulumi:pulumi:Stack``, made by a first ``up`` and deleted by ``destroy``) and the pools'
reapers' explicit provider (``machines.program.reaper.reapers_provider``) too, so the
counts are the engine's: counting the default providers instead of the stack said one more
per plugin past the first (17 to create on a stack spanning both clouds where the engine
said 16)."""


def is_default_provider(type_: str, name: str) -> bool:
    """Whether the resource is one of the engine's default providers (see above)."""
    return type_.startswith(PROVIDER_TYPE) and name.startswith(DEFAULT_PROVIDER)


def type_keys() -> dict[str, str]:
    """The property that is a machine's type, per cloud's machine resource: changing it in
    place powers the machine off (Hetzner changes a server's type only while it is off; EC2
    stops an instance to change its type) until the change is done."""
    return {token: cls.machine_type_key for token, cls in machine_resources().items()}


class Change(BaseModel):
    """One resource a preview or update changes: the op, its type and name, changed keys."""

    model_config = ConfigDict(frozen=True)

    op: Op
    type: str
    name: str
    urn: str
    keys: tuple[str, ...] = ()


class PoolCount(BaseModel):
    """One pool's machines around a change: the stack's, the autoscaler's, and the deleted."""

    model_config = ConfigDict(frozen=True)

    pool: str
    kept: int
    autoscaled: int
    deletes: int
    reaped: tuple[str, ...] = ()
    creates: int = 0
    renamed: int = 0
    boots: str = ""
    """What the pool's new machines boot when its settings find the image anew (a Hetzner
    label selector's newest available snapshot: id and description); empty otherwise."""
    places: tuple[PlaceReport, ...] = ()
    """For a pool that names its places: the same counts place by place, where the stack's
    new machines go included (``machines.automation.places``)."""
    notices: dict[str, int] = {}
    """The pool's machines under the cloud's notice, by kind (``automation.notices``)."""

    @property
    def kept_after(self) -> int:
        """The machines the stack keeps once the change is applied."""
        return self.kept - (self.deletes - len(self.reaped)) + self.creates

    def kept_text(self) -> str:
        """``2`` when the change keeps the count, ``2 → 3`` when it changes it."""
        after = self.kept_after
        return str(self.kept) if after == self.kept else f"{self.kept} → {after}"

    def text(self) -> str:
        """``pool lab: 2 → 3 kept by the stack, 7 made by the autoscaler, 0 to delete``,
        and how many of the stack's machines get their new name in place; for a pool that
        names its places, a line for each below it."""
        names = f" ({', '.join(self.reaped)} of the autoscaler)" if self.reaped else ""
        return (
            f"pool {self.pool}: {self.kept_text()} kept by the stack, {self.autoscaled} made by "
            f"the autoscaler, {self.deletes} to delete{names}"
            + (f"; {self.rename_note()}" if self.renamed else "")
            + (f"; new machines boot {self.boots}" if self.boots else "")
            + (f"; under the cloud's notice: {notices_text(self.notices)}" if self.notices else "")
            + "".join(f"\n  {place.text()}" for place in self.places)
        )

    def made_at(self) -> str:
        """Where the stack's new machines of a pool that names its places go (went, once
        the change is applied): ``1 at ec2 t4g.small in eu-central-1a``; empty for another
        pool, or when none are made."""
        made = [
            (place.kept_after - place.kept, place.place)
            for place in self.places
            if place.kept is not None
            and place.kept_after is not None
            and place.kept_after > place.kept
        ]
        return ", ".join(f"{n} at {place}" for n, place in made)

    def rename_note(self) -> str:
        """What the change does to the stack's machines of the old name form."""
        return (
            f"{self.renamed} of the stack's machines renamed in place from "
            f"<owner>-{self.pool}-<n> to <owner>-{self.pool}-<n>.stack (the same machines "
            "and host names: updated, not replaced)"
        )


def pool_counts(
    changes: tuple[Change, ...], owner: str, listed: Mapping[str, list[Machine]]
) -> tuple[PoolCount, ...]:
    """Each listed pool's counts, from its machines (listed before the change) and the
    change's steps: the stack's machines by their names in the stack
    (``<owner>-<pool>-<n>``), the autoscaler's by the pool's reaper (``<pool>-autoscaled``),
    the renamed by a stack machine of the old name form the change updates."""
    return tuple(pool_count(changes, owner, pool, machines) for pool, machines in listed.items())


def pool_count(
    changes: tuple[Change, ...], owner: str, pool: str, machines: list[Machine]
) -> PoolCount:
    """One pool's counts (``pool_counts``)."""
    theirs = autoscaled(machines)
    reaped = tuple(sorted(m.name for m in theirs)) if reaps(changes, pool) else ()
    kept = [m for m in machines if m.managed_by and m.status != Status.DELETING]
    updated = {c.name for c in changes if c.op == "update"}
    return PoolCount(
        pool=pool,
        kept=len(kept),
        autoscaled=len(theirs),
        deletes=stack_machines(changes, "delete", owner, pool) + len(reaped),
        reaped=reaped,
        creates=sum(1 for c in changes if c.op == "create" and is_machine_key(c.name, owner, pool)),
        renamed=sum(1 for m in kept if not is_stack_name(m.name) and m.name in updated),
        notices=notices(machines),
    )


def stack_machines(changes: tuple[Change, ...], op: Op, owner: str, pool: str) -> int:
    """How many of the pool's stack machines the change's steps ``op`` (reapers aside)."""
    return sum(
        1
        for c in changes
        if c.op == op and c.type != REAPER_TYPE and is_machine_key(c.name, owner, pool)
    )


def reaps(changes: tuple[Change, ...], pool: str) -> bool:
    """Whether the change deletes the pool's reaper, and with it the autoscaler's machines
    (replaced: the pool's machines stop using a shared resource the change may delete)."""
    return any(
        c.op in ("delete", "replace") and c.type == REAPER_TYPE and c.name == reaper_name(pool)
        for c in changes
    )


class Diff(BaseModel):
    """What an operation changes, per resource (property names only, never values), and
    per pool of the stack (``pools``, see the module's notes)."""

    model_config = ConfigDict(frozen=True)

    stack: str
    changes: tuple[Change, ...] = ()
    pools: tuple[PoolCount, ...] = ()
    pending: tuple[Change, ...] = ()
    """What a targeted update (``resize``) left for a later ``up``: the stack's other changes."""
    warnings: tuple[str, ...] = ()
    """What the change will meet that its resources do not show: a pool's type out of stock
    where the change makes machines of it (``machines.automation.availability.stock_warnings``),
    a pool its size would take past its max (``machines.automation.fencing.max_warnings``)."""

    def notes(self) -> list[str]:
        """The ``warnings``, then what the change costs the machines it changes in place:
        those whose type changes are powered off for it."""
        retyped = sorted(
            c.name for c in self.changes if c.op == "update" and type_keys().get(c.type) in c.keys
        )
        if not retyped:
            return list(self.warnings)
        return [
            *self.warnings,
            f"{len(retyped)} machine(s) change type in place ({', '.join(retyped)}): each is "
            "powered off while its type changes and its work stops until it is back",
        ]

    @property
    def counts(self) -> dict[Op, int]:
        """How many resources each op touches, every op present."""
        return {op: sum(1 for c in self.changes if c.op == op) for op in OPS}

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def sorted(self) -> list[Change]:
        """The changes grouped by op (create, update, replace, delete), then type and name."""
        return sorted(self.changes, key=lambda c: (OPS.index(c.op), c.type, c.name))

    def summary(self) -> str:
        """``2 to create, 0 to update, 0 to replace, 1 to delete`` or ``no changes``."""
        if not self.has_changes:
            return "no changes"
        return ", ".join(f"{n} to {op}" for op, n in self.counts.items())

    def machines(self, *, past: bool = False) -> str:
        """The machines the change creates and deletes, the stack's and the autoscaler's, as
        the pool lines count them: ``machines: 1 to create, 9 to delete (2 kept by the stack,
        7 made by the autoscaler)``, and where the new ones of a pool that names its places
        go (``machines: 1 created (pool arm: 1 at ec2 t4g.small in eu-central-1a), 0
        deleted``); empty when the pools are unknown."""
        if not self.pools:
            return ""
        made = sum(p.creates for p in self.pools)
        reaped = sum(len(p.reaped) for p in self.pools)
        kept = sum(p.deletes for p in self.pools) - reaped
        create, delete = ("created", "deleted") if past else ("to create", "to delete")
        if not (made or kept or reaped):
            return f"machines: none {create} or {delete.removeprefix('to ')}"
        where = "; ".join(f"pool {p.pool}: {p.made_at()}" for p in self.pools if p.made_at())
        text = f"machines: {made} {create}" + (f" ({where})" if where else "")
        text += f", {kept + reaped} {delete}"
        if kept + reaped:
            text += f" ({kept} kept by the stack, {reaped} made by the autoscaler)"
        return text

    def pending_note(self) -> str:
        """One line on the changes a targeted update left pending; empty when none."""
        if not self.pending:
            return ""
        shown = [f"{c.op} {c.name}" for c in sorted(self.pending, key=lambda c: c.name)]
        listed = ", ".join(shown[:PENDING_SHOWN]) + (", ..." if len(shown) > PENDING_SHOWN else "")
        return (
            f"stack {self.stack}: {len(self.pending)} change(s) elsewhere left pending, not "
            f"applied ({listed}): review with orca-machines preview {self.stack}, apply with "
            f"orca-machines up {self.stack}"
        )

    def text(self) -> str:
        """One line per change (``+ create  type  name``), then the summary."""
        marks = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}
        lines = [
            f"{marks[c.op]:<2} {c.op:<7} {c.type}  {c.name}"
            + (f"  [{', '.join(c.keys)}]" if c.keys else "")
            for c in self.sorted()
        ]
        pools = [p.text() for p in self.pools]
        notes = [f"warning: {note}" for note in self.notes()]
        return "\n".join([*lines, *pools, *notes, f"stack {self.stack}: {self.summary()}"])

    def markdown(self) -> str:
        """The diff for a pull request: a table grouped by op, type and name, and a summary."""
        title = f"### Pulumi preview of stack `{cell(self.stack)}`"
        notes = [line for note in self.notes() for line in (f"> **Warning:** {cell(note)}", "")]
        if not self.has_changes:
            return "\n".join([title, "", *notes, "No changes.", "", *self._pools_markdown()])
        counts = ", ".join(f"{n} to {op}" for op, n in self.counts.items())
        return "\n".join(
            [
                title,
                "",
                *notes,
                *self.changes_table(),
                "",
                f"**{counts}.**",
                "",
                *self._pools_markdown(),
            ]
        )

    def changes_table(self) -> list[str]:
        """The changes as a Markdown table's lines: op, type, name and changed keys, in the
        order of ``sorted`` (the diff's own ``markdown`` and the CI comment show it)."""
        return [
            "| Op | Type | Name | Changed |",
            "| --- | --- | --- | --- |",
            *(
                f"| {c.op} | `{cell(c.type)}` | `{cell(c.name)}` | "
                f"{', '.join(f'`{cell(k)}`' for k in c.keys)} |"
                for c in self.sorted()
            ),
        ]

    def _pools_markdown(self) -> list[str]:
        if not self.pools:
            return []
        rows = [
            f"| `{cell(p.pool)}` | {p.kept_text()} | {p.autoscaled} | {p.deletes} | "
            f"{', '.join(f'`{cell(n)}`' for n in p.reaped)} |"
            for p in self.pools
        ]
        return [
            "| Pool | Kept by the stack (before → after) | Made by the autoscaler | To delete | "
            "Autoscaler machines deleted |",
            "| --- | --- | --- | --- | --- |",
            *rows,
            "",
            *[f"`{cell(p.pool)}`: {cell(p.rename_note())}." for p in self.pools if p.renamed],
            *[
                f"`{cell(p.pool)}`: new machines boot {cell(p.boots)}."
                for p in self.pools
                if p.boots
            ],
            *[
                f"`{cell(p.pool)}`: under the cloud's notice: {notices_text(p.notices)}."
                for p in self.pools
                if p.notices
            ],
            *([""] if any(p.renamed or p.boots or p.notices for p in self.pools) else []),
        ]

    def report(self) -> dict[str, object]:
        """The diff as JSON-ready data: stack, counts, has_changes and the changes."""
        return {
            "stack": self.stack,
            "has_changes": self.has_changes,
            "counts": self.counts,
            "changes": [c.model_dump() for c in self.sorted()],
            "pools": [
                {**p.model_dump(), "places": [pl.model_dump(mode="json") for pl in p.places]}
                for p in self.pools
            ],
            "notes": self.notes(),
        }


def cell(text: str) -> str:
    """``text`` safe in a Markdown table cell or inline code: ``|`` escaped, backquotes
    made quotes, one line."""
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")


class Changes:
    """An ``on_event`` collecting each resource's step, once per resource, and the run's
    counts per op.

    ``earlier``: the steps an earlier run of the same operation took before it failed (an
    ``up`` run again past a place refused for stock), so that what the operation changed in
    all is one ``Diff``; its steps that failed are not among them.
    """

    def __init__(self, earlier: Changes | None = None) -> None:
        self._changes: dict[str, Change] = {} if earlier is None else earlier.taken()
        self._failed: set[str] = set()
        self.counts: dict[str, int] = {}
        """The engine's own count per op, from the run's summary event."""

    def taken(self) -> dict[str, Change]:
        """The steps this run (and those before it) took, leaving out the steps that failed:
        an engine that meets a failure lets the steps under way finish, and starts no more."""
        return {urn: c for urn, c in self._changes.items() if urn not in self._failed}

    def __call__(self, event: auto.EngineEvent) -> None:
        summary = event.summary_event
        if summary is not None:
            changes = summary.resource_changes or {}
            self.counts = {str(getattr(op, "value", op)): int(n) for op, n in changes.items()}
        failed = event.res_op_failed_event
        if failed is not None:
            self._failed.add(failed.metadata.urn)
        pre = event.resource_pre_event
        if pre is None:
            return
        meta = pre.metadata
        op = _OPS.get(str(getattr(meta.op, "value", meta.op)))
        name = meta.urn.rsplit("::", 1)[-1]
        if op is None or is_default_provider(meta.type, name):
            return
        if meta.urn in self._changes and op != "replace":
            return
        keys = tuple(sorted({*(meta.diffs or ()), *(meta.keys or ())})) if op in _KEYED else ()
        self._changes[meta.urn] = Change(op=op, type=meta.type, name=name, urn=meta.urn, keys=keys)

    def diff(self, stack: str) -> Diff:
        return Diff(stack=stack, changes=tuple(self.taken().values()))
