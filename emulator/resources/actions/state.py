"""Actions: the project's asynchronous tasks, and the lazy clock that finishes them.

Every action is `running` until its time has come, then `success`; finishing applies its
effect (e.g. a booted server becomes `running`). No background thread: `finish_due` runs
at the start of every transaction, so a status read agrees with the actions read beside it.

The control API can tell actions to fail (`ActionFailure` rules by command): such an action
ends in `error` with the error the real API reports (`action_failed`, "Action failed"),
applies its failure effect instead (e.g. a server whose create failed stays `off`), and the
actions started after it for the same work (`after`) fail with it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from emulator.resources.collection import Collection

if TYPE_CHECKING:
    from emulator.project import Project

ACTION_STATUSES: tuple[str, ...] = ("running", "success", "error")
FIRST_ID = 30_000_001
FAILED_CODE = "action_failed"
FAILED_MESSAGE = "Action failed"


class ActionFailureError(ValueError):
    """A failure rule is malformed."""


@dataclass
class ActionFailure:
    """A control rule: the next `times` actions of `command` end in `error` (None: all)."""

    command: str
    code: str = FAILED_CODE
    message: str = FAILED_MESSAGE
    times: int | None = 1

    @classmethod
    def from_json(cls, raw: object) -> ActionFailure:
        """Read `{"command", "code"?, "message"?, "times"?}`."""
        if not isinstance(raw, dict):
            raise ActionFailureError("each rule must be an object")
        command, code = raw.get("command"), raw.get("code", FAILED_CODE)
        message, times = raw.get("message", FAILED_MESSAGE), raw.get("times", 1)
        if not isinstance(command, str) or not command:
            raise ActionFailureError("'command' must be an action command such as create_server")
        if not isinstance(code, str) or not isinstance(message, str):
            raise ActionFailureError("'code' and 'message' must be strings")
        if times is not None and (
            isinstance(times, bool) or not isinstance(times, int) or times < 1
        ):
            raise ActionFailureError("'times' must be an integer >= 1 or null (always)")
        return cls(command, code, message, times)

    def to_json(self) -> dict[str, object]:
        """The rule as the control API shows it (with the times it has left): its fields."""
        return asdict(self)


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
    on_error: Callable[[], None] | None = field(default=None, repr=False)
    fails_with: dict[str, str] | None = None  # the error it will end with, decided at start
    after: Action | None = field(default=None, repr=False)  # fails when this one failed

    def touches(self, resource_id: int, resource_type: str) -> bool:
        """Whether this action concerns the given resource."""
        return (resource_id, resource_type) in self.resources


class Actions(Collection[Action]):
    """Every action of the project, and the running ones in the order they finish."""

    kind = "action"
    first_id = FIRST_ID

    def __init__(self, project: Project) -> None:
        super().__init__(project)
        self._pending: list[tuple[float, int]] = []
        self.failures: list[ActionFailure] = []

    def finish_due(self, now: float) -> None:
        """Finish every action whose time has come, in order, applying its effects."""
        while self._pending and self._pending[0][0] <= now:
            _, action_id = heapq.heappop(self._pending)
            action = self.by_id.get(action_id)
            if action is not None and action.status == "running":
                self._finish(action)

    def _finish(self, action: Action) -> None:
        action.finished = max(action.finishes, action.started)
        if (
            action.after is not None
            and action.after.status == "error"
            and action.fails_with is None
        ):
            action.fails_with = action.after.error
        if action.fails_with is not None:
            action.status, action.error = "error", action.fails_with
            callback = action.on_error
        else:
            action.status = "success"
            callback = action.on_finish
        action.on_finish = action.on_error = None
        if callback is not None:
            callback()

    def _failure_for(self, command: str) -> dict[str, str] | None:
        """The error a new action of `command` is to end with, using up one rule's time."""
        for rule in self.failures:
            if rule.command == command:
                if rule.times is not None:
                    rule.times -= 1
                    if rule.times == 0:
                        self.failures.remove(rule)
                return {"code": rule.code, "message": rule.message}
        return None

    def start(
        self,
        command: str,
        resources: list[tuple[int, str]],
        seconds: float,
        on_finish: Callable[[], None] | None = None,
        *,
        on_error: Callable[[], None] | None = None,
        after: Action | None = None,
    ) -> Action:
        """Start an action that succeeds after `seconds` (at once when 0), unless a failure
        rule names its command or the action it comes `after` failed."""
        now = self.project.now
        action = Action(
            next(self._ids),
            command,
            resources,
            now,
            now + max(0.0, seconds),
            on_finish=on_finish,
            on_error=on_error,
            fails_with=self._failure_for(command),
            after=after,
        )
        self._added(action)
        if seconds <= 0:
            self._finish(action)
        else:
            heapq.heappush(self._pending, (action.finishes, action.id))
        return action

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

    def running(
        self, resource_id: int, resource_type: str, commands: tuple[str, ...]
    ) -> list[Action]:
        """The running actions of these commands on one resource."""
        return [
            a
            for a in self.by_id.values()
            if a.status == "running"
            and a.command in commands
            and a.touches(resource_id, resource_type)
        ]

    def reset(self) -> None:
        """Drop every action and failure rule (ids keep counting up)."""
        super().reset()
        self._pending.clear()
        self.failures.clear()
