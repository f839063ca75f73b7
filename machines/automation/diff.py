"""What a preview or an update changes, per resource, collected from the engine's events.

Property names only, never values: a diff is safe to post on a pull request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pulumi import automation as auto
from pydantic import BaseModel, ConfigDict

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
_STACK_TYPE = "pulumi:pulumi:Stack"


class Change(BaseModel):
    """One resource a preview or update changes: the op, its type and name, changed keys."""

    model_config = ConfigDict(frozen=True)

    op: Op
    type: str
    name: str
    urn: str
    keys: tuple[str, ...] = ()


class Diff(BaseModel):
    """What an operation changes, per resource; property names only, never values."""

    model_config = ConfigDict(frozen=True)

    stack: str
    changes: tuple[Change, ...] = ()

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

    def text(self) -> str:
        """One line per change (``+ create  type  name``), then the summary."""
        marks = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}
        lines = [
            f"{marks[c.op]:<2} {c.op:<7} {c.type}  {c.name}"
            + (f"  [{', '.join(c.keys)}]" if c.keys else "")
            for c in self.sorted()
        ]
        return "\n".join([*lines, f"stack {self.stack}: {self.summary()}"])

    def markdown(self) -> str:
        """The diff for a pull request: a table grouped by op, type and name, and a summary."""
        title = f"### Pulumi preview of stack `{_cell(self.stack)}`"
        if not self.has_changes:
            return f"{title}\n\nNo changes.\n"
        rows = [
            f"| {c.op} | `{_cell(c.type)}` | `{_cell(c.name)}` | "
            f"{', '.join(f'`{_cell(k)}`' for k in c.keys)} |"
            for c in self.sorted()
        ]
        counts = ", ".join(f"{n} to {op}" for op, n in self.counts.items())
        return "\n".join(
            [
                title,
                "",
                "| Op | Type | Name | Changed |",
                "| --- | --- | --- | --- |",
                *rows,
                "",
                f"**{counts}.**",
                "",
            ]
        )

    def report(self) -> dict[str, object]:
        """The diff as JSON-ready data: stack, counts, has_changes and the changes."""
        return {
            "stack": self.stack,
            "has_changes": self.has_changes,
            "counts": self.counts,
            "changes": [c.model_dump() for c in self.sorted()],
        }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")


class Changes:
    """An ``on_event`` collecting each resource's step, once per resource."""

    def __init__(self) -> None:
        self._changes: dict[str, Change] = {}

    def __call__(self, event: auto.EngineEvent) -> None:
        pre = event.resource_pre_event
        if pre is None:
            return
        meta = pre.metadata
        op = _OPS.get(str(getattr(meta.op, "value", meta.op)))
        if op is None or meta.type == _STACK_TYPE:
            return
        if meta.urn in self._changes and op != "replace":
            return
        keys = tuple(sorted({*(meta.diffs or ()), *(meta.keys or ())})) if op in _KEYED else ()
        self._changes[meta.urn] = Change(
            op=op, type=meta.type, name=meta.urn.rsplit("::", 1)[-1], urn=meta.urn, keys=keys
        )

    def diff(self, stack: str) -> Diff:
        return Diff(stack=stack, changes=tuple(self._changes.values()))
