"""One pull-request comment for every stack a change affects: previews, pools and money.

The body starts with a hidden ``MARKER`` (CI finds its earlier comment by it and edits it
instead of adding one per push), then one line per stack, then each stack's details in a
collapsible section. Past ``LIMIT`` characters (GitHub refuses comments over 65,536) it
falls back to the summary alone, as ``summary_only`` asks. A failed preview shows the
engine's error line, masked, never a traceback. No stack affected: an empty body.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from decimal import Decimal
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from machines.automation.cost import PriceLists, money
from machines.automation.diff import Diff, cell
from machines.automation.operation import OnOutput, Operation
from machines.automation.pool_report import PoolChange, PoolSide, StackPools, pool_changes
from machines.automation.project import Project, scratch_copy
from machines.automation.snapshot import SharedListing
from machines.automation.stacks import previewed
from machines.runtime.errors import MachinesError
from machines.runtime.models import Market
from machines.runtime.provider import Provider
from machines.runtime.secrets import mask
from machines.runtime.settings import PULUMI_BACKEND_URL

MARKER = "<!-- orca-machines-preview -->"
"""Hidden in the comment; the workflows update the comment that carries it."""

LIMIT = 60_000
"""Characters a body may have before details are left out (GitHub takes 65,536)."""

TITLE = "## orca-machines preview"

COST_NOTE = (
    "Monthly cost: net list prices from the cloud's own price list; autoscaler machines "
    "at their current number."
)


class StackResult(BaseModel):
    """One stack's preview: its diff and pools, or the error that stopped it."""

    model_config = ConfigDict(frozen=True)

    stack: str
    diff: Diff | None = None
    pools: StackPools | None = None
    error: str = ""
    new: bool = False
    """The stack is new in the change (no stack file on the base branch, none in the
    backend): its machines are all to create, as its preview shows."""

    @property
    def failed(self) -> bool:
        return self.diff is None


def run(
    stacks: Sequence[str],
    *,
    project: str | Path | None = None,
    on_output: OnOutput | None = None,
    existing: Collection[str] = (),
    on_message: OnOutput | None = None,
) -> list[StackResult]:
    """Preview each stack on a scratch copy of the project (the checkout's stack files stay
    as committed); a failure is kept as that stack's result, the others still run.

    ``existing`` are the stacks the base branch has already: one the backend does not hold
    is a failure naming the variable to check, never previewed as if new (every machine
    "to create", the cost rising from zero, the autoscaler's machines uncounted); a stack
    of neither is new in the change, previewed as new and marked so."""
    if not stacks:
        return []
    with scratch_copy(project) as copy:
        return _run(stacks, copy, on_output, frozenset(existing), on_message)


def missing_from_backend(stack: str) -> str:
    """Why a stack the base branch has is not previewed: the backend does not hold it."""
    where = os.environ.get(PULUMI_BACKEND_URL)
    backend = (
        f"the backend {mask(where)} ({PULUMI_BACKEND_URL})"
        if where
        else f"the checkout's .pulumi-state/ ({PULUMI_BACKEND_URL} is unset)"
    )
    return (
        f"stack {stack} exists on the base branch (stacks/Pulumi.{stack}.yaml) but not in "
        f"{backend}: check {PULUMI_BACKEND_URL}, the CI secret, names the backend its state "
        "lives in (previewed without its state, every machine would read as new and the "
        "autoscaler's as none)"
    )


def _run(
    stacks: Sequence[str],
    project: Path,
    on_output: OnOutput | None,
    existing: frozenset[str],
    on_message: OnOutput | None = None,
) -> list[StackResult]:
    """Each stack's result; the stacks share the project read once, one engine command
    (one ``pulumi version``), one listing of their owners' machines and one price list per
    cloud account."""
    shared = Project.of(project)
    ops: list[Operation] = []
    listing = SharedListing(lambda: [p for op in ops if (p := _provider(op)) is not None])
    ops += [
        Operation(stack, shared, on_output=on_output, shared=listing, on_message=on_message)
        for stack in stacks
    ]
    ops[0].start_engine()
    for op in ops[1:]:
        op.share_engine(ops[0])
    prices = PriceLists()
    return [preview_stack(op, existing, prices) for op in ops]


def _provider(op: Operation) -> Provider | None:
    """The provider ``op``'s snapshot will list with, for the shared listing; None when it
    cannot be made yet (its own preview then says why, or lists on its own)."""
    try:
        return op.runtime_provider(op.deployment() if op.has_file else None)
    except Exception:  # another stack's problem is its own result, never this one's
        return None


def preview_stack(
    op: Operation, existing: Collection[str] = (), prices: PriceLists | None = None
) -> StackResult:
    """One stack's preview and its pools counted on the preview's snapshot, priced from
    ``prices`` when given (else the stack's own list); a failure is its result."""
    stack = op.stack
    try:
        held = op.state().exists
        if stack in existing and not held:
            return StackResult(stack=stack, error=missing_from_backend(stack))
        diff, snapshot = previewed(op)
    except MachinesError as error:
        return StackResult(stack=stack, error=one_line(str(error)))
    except Exception as error:  # one stack's surprise must not lose the others
        said = f"preview of stack {stack} failed: {type(error).__name__}: {error}"
        return StackResult(stack=stack, error=one_line(said))
    try:
        pools = pool_changes(
            diff,
            snapshot,
            project=op.project.root,
            environ=op.environ,
            prices=None if prices is None else prices.of(snapshot.provider),
            catalogue=op.catalogue,
        )
    except MachinesError as error:
        pools = StackPools(stack=stack, notes=(f"pools unknown: {one_line(str(error))}",))
    return StackResult(stack=stack, diff=diff, pools=pools, new=not held)


def render(results: Sequence[StackResult], *, summary_only: bool = False) -> str:
    """The comment's Markdown; empty when no stack was previewed."""
    if not results:
        return ""
    if not summary_only:
        body = _body(results, details=True)
        if len(body) <= LIMIT:
            return body
        return _body(
            results,
            details=False,
            note=f"Details left out: they take {len(body):,} characters, more than a comment "
            "holds. The job's log has every stack's full diff.",
        )
    return _body(results, details=False, note="Summary only: the job's log has the full diffs.")


def one_line(text: str) -> str:
    """An error as one masked line: what the engine said, never a traceback or a secret."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return mask("; ".join(lines))[:1000]


def _body(results: Sequence[StackResult], *, details: bool, note: str = "") -> str:
    failed = sum(r.failed for r in results)
    changed = sum(1 for r in results if r.diff is not None and r.diff.has_changes)
    head = (
        f"{len(results)} stack{'' if len(results) == 1 else 's'} previewed: "
        f"{changed} with changes, {failed} failed."
    )
    lines = [
        MARKER,
        TITLE,
        "",
        head,
        "",
        "| Stack | Preview | Monthly cost |",
        "| --- | --- | --- |",
    ]
    lines += [_summary_row(r) for r in results]
    sentences = [
        f"- `{cell(r.stack)}` {p.sentence()}"
        for r in results
        if r.pools is not None
        for p in r.pools.pools
    ]
    if sentences:
        lines += ["", *sentences]
    lines += ["", f"<sub>{COST_NOTE}</sub>"]
    if note:
        lines += ["", f"_{note}_"]
    for result in results:
        if result.failed:
            lines += ["", *_failure(result)]
        elif details:
            lines += ["", *_details(result)]
    return "\n".join(lines) + "\n"


def _summary_row(result: StackResult) -> str:
    name = f"`{cell(result.stack)}`"
    if result.diff is None:
        return f"| {name} | ❌ preview failed | |"
    cost = result.pools.cost_line() if result.pools is not None else ""
    mark = "🟡" if result.diff.has_changes else "✅"
    new = " (new stack)" if result.new else ""
    return f"| {name}{new} | {mark} {_summary(result)} | {cell(cost)} |"


def _summary(result: StackResult) -> str:
    """The stack's change in machines then other resources, as the pool lines count them."""
    assert result.diff is not None
    if not result.diff.has_changes or result.pools is None:
        return result.diff.summary()
    return result.pools.changes.text()


def _failure(result: StackResult) -> list[str]:
    return [
        f"<details open><summary>❌ <b>{_html(result.stack)}</b>: preview failed</summary>",
        "",
        "```text",
        result.error.replace("```", "'''"),
        "```",
        "",
        "</details>",
    ]


def _details(result: StackResult) -> list[str]:
    diff = result.diff
    assert diff is not None
    lines = [
        f"<details><summary><b>{_html(result.stack)}</b>: {_html(_summary(result))}</summary>",
        "",
    ]
    pools = result.pools
    if pools is not None and pools.pools:
        lines += [
            "| Pool | Kept before → after | Autoscaler now | Deletes | Monthly cost |",
            "| --- | --- | --- | --- | --- |",
            *(row for p in pools.pools for row in (_pool_row(p, pools.currency), *_place_rows(p))),
            "",
        ]
    if pools is not None and pools.notes:
        lines += [*(f"> {cell(n)}" for n in pools.notes), ""]
    if diff.notes():
        lines += [*(f"> **Warning:** {cell(n)}" for n in diff.notes()), ""]
    if diff.has_changes:
        lines += [*diff.changes_table(), ""]
    else:
        lines += ["No changes.", ""]
    return [*lines, "</details>"]


def _pool_row(pool: PoolChange, currency: str) -> str:
    def side(s: PoolSide | None) -> str:
        if s is None:
            return "—"
        if pool.places:
            return f"{s.kept} at its places"
        spot = " (spot)" if s.market == Market.SPOT and s.kept else ""
        return f"{s.kept} x {s.machine_type}{spot} in {s.location}"

    autoscaler = "unknown" if pool.autoscaler is None else str(pool.autoscaler)
    deletes = [f"{pool.deletes_kept} kept"] if pool.deletes_kept else []
    theirs = pool.deletes_autoscaler
    if theirs is None:
        deletes.append("unknown autoscaler")
    elif theirs:
        deletes.append(f"{theirs} autoscaler")
    return (
        f"| `{cell(pool.pool)}` | {side(pool.before)} → {side(pool.after)} | {autoscaler} | "
        f"{', '.join(deletes) or '—'} | {_arrow(pool.cost_before, pool.cost_after, currency)}"
        f"{_on_demand(pool, currency)} |"
    )


def _place_rows(pool: PoolChange) -> list[str]:
    """The rows under a pool that names its places: each place, its kept machines before and
    after, the autoscaler's there, what the change deletes there, its money in its cloud's
    currency."""
    rows = []
    for place in pool.places:
        kept = "unknown" if place.kept is None else str(place.kept)
        after = kept if place.kept_after is None else str(place.kept_after)
        autoscaler = "unknown" if place.autoscaler is None else str(place.autoscaler)
        where = cell(str(place.place)) + ("" if place.named else " (no more named)")
        rows.append(
            f"| ↳ {where} | {kept} → {after} | {autoscaler} | {place.deletes or '—'} | "
            f"{money(place.monthly, place.currency)} |"
        )
    return rows


def _on_demand(pool: PoolChange, currency: str) -> str:
    """Beside a pool that buys spot: what its machines after the change cost on-demand."""
    if pool.market == Market.ON_DEMAND or pool.places:  # a place's market is on its row
        return ""
    return f" ({pool.market.value}; on-demand {money(pool.on_demand_after, currency)})"


def _arrow(before: Decimal | None, after: Decimal | None, currency: str) -> str:
    return f"{money(before, currency)} → {money(after, currency)}"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
