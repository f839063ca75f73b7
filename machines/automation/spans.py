"""Automation's stack operations as spans: ``automation.preview``, ``.up``, ``.destroy``,
``.refresh`` and ``.resize``, with the stack and the change summary as attributes.

The spans come from the runtime's tracer (``machines.runtime.telemetry``), so an application that
installs an SDK sees a resize's refresh and targeted update beneath it. An operation that
fails has the error's type on its span, never its message: the engine's lines may quote
configuration.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from opentelemetry import trace

from machines.automation.diff import OPS, Diff
from machines.runtime import telemetry

STACK = "orca.stack"
CHANGES = "orca.changes"
"""Prefix of the change summary: ``orca.changes.create`` ... ``.delete``, ``.total``."""
SIZE = "orca.size"

Operation = TypeVar("Operation", bound=Callable[..., Any])


def summary(result: Diff | Mapping[str, int]) -> dict[str, int | str]:
    """The change summary of an operation's result as span attributes: per op the
    resources it changes (a refresh: the engine's counts per op), their total, and, for a
    ``Diff``, the pools it touches and its one-line summary."""
    if isinstance(result, Diff):
        counts: dict[str, int] = {op: n for op, n in result.counts.items()}
        found: dict[str, int | str] = {f"{CHANGES}.{op}": counts[op] for op in OPS}
        found[f"{CHANGES}.total"] = sum(counts.values())
        found[f"{CHANGES}.pools"] = len(result.pools)
        found[f"{CHANGES}.summary"] = result.summary()
        return found
    counted: dict[str, int | str] = {f"{CHANGES}.{op}": int(n) for op, n in result.items()}
    counted[f"{CHANGES}.total"] = sum(int(n) for op, n in result.items() if op != "same")
    return counted


def traced(action: str) -> Callable[[Operation], Operation]:
    """Run the stack operation ``action`` in a span ``automation.<action>``; its first
    argument is the stack (a resize's next two, or ``pool`` and ``size``: the pool and its
    size)."""

    def wrap(operation: Operation) -> Operation:
        @functools.wraps(operation)
        def run(stack: str, *args: Any, **kwargs: Any) -> Any:
            attributes: dict[str, str | int] = {STACK: stack}
            if action == "resize":
                pool, size = (*args, kwargs.get("pool"), kwargs.get("size"))[:2]
                attributes[telemetry.POOL] = str(pool)
                attributes[SIZE] = int(size) if isinstance(size, int) else -1
            with telemetry.tracer().start_as_current_span(
                f"automation.{action}",
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                try:
                    result = operation(stack, *args, **kwargs)
                except BaseException as error:
                    kind = telemetry.error_type(error)
                    span.set_attribute(telemetry.ERROR_TYPE, kind)
                    span.set_status(trace.StatusCode.ERROR, kind)
                    raise
                span.set_attributes(summary(result))
                return result

        return run  # type: ignore[return-value]

    return wrap
