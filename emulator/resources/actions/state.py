"""Actions: the project's asynchronous tasks, and the lazy clock that finishes them.

Every action is `running` until its time has come, then `success`; finishing applies its
effect (e.g. a booted server becomes `running`). No background thread: `finish_due` runs
at the start of every transaction, so a status read agrees with the actions read beside it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from emulator.errors import not_found

if TYPE_CHECKING:
    from emulator.project import Project

ACTION_STATUSES: tuple[str, ...] = ("running", "success", "error")
FIRST_ID = 30_000_001


@dataclass
class Action:
    """An asynchronous task; `running` until `finishes`, then `success` (or `error`)."""

    id: int
    command: str
    resources: list[tuple[int, str]]  # (id, type)
    started: float
    finishes: float
    status: str = "running"
    finished: float | None = None
    error: dict[str, str] | None = None
    on_finish: Callable[[], None] | None = field(default=None, repr=False)

    def touches(self, resource_id: int, resource_type: str) -> bool:
        """Whether this action concerns the given resource."""
        return (resource_id, resource_type) in self.resources


class Actions:
    """Every action of the project, and the running ones in the order they finish."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.by_id: dict[int, Action] = {}
        self._pending: list[tuple[float, int]] = []
        self._ids = itertools.count(FIRST_ID)

    def finish_due(self, now: float) -> None:
        """Finish every action whose time has come, in order, applying its effects."""
        while self._pending and self._pending[0][0] <= now:
            _, action_id = heapq.heappop(self._pending)
            action = self.by_id.get(action_id)
            if action is not None and action.status == "running":
                self._finish(action)

    def _finish(self, action: Action) -> None:
        action.status = "success"
        action.finished = max(action.finishes, action.started)
        callback, action.on_finish = action.on_finish, None
        if callback is not None:
            callback()

    def start(
        self,
        command: str,
        resources: list[tuple[int, str]],
        seconds: float,
        on_finish: Callable[[], None] | None = None,
    ) -> Action:
        """Start an action that succeeds after `seconds` (at once when 0)."""
        now = self.project.now
        action = Action(
            next(self._ids), command, resources, now, now + max(0.0, seconds), on_finish=on_finish
        )
        self.by_id[action.id] = action
        if seconds <= 0:
            self._finish(action)
        else:
            heapq.heappush(self._pending, (action.finishes, action.id))
        return action

    def get(self, action_id: int) -> Action:
        """An action by id."""
        if action_id not in self.by_id:
            raise not_found("action", action_id)
        return self.by_id[action_id]

    def of(self, resource_id: int, resource_type: str) -> list[Action]:
        """The actions that concern one resource, oldest first."""
        return [a for a in self.by_id.values() if a.touches(resource_id, resource_type)]

    def running_on(self, resource_id: int, resource_type: str) -> bool:
        """Whether an action on this resource is still running."""
        return any(
            self.by_id[action_id].touches(resource_id, resource_type)
            for _, action_id in self._pending
            if self.by_id[action_id].status == "running"
        )

    def reset(self) -> None:
        """Drop every action (ids keep counting up)."""
        self.by_id.clear()
        self._pending.clear()
