"""Retries with jittered exponential backoff inside a bounded time per call.

Providers say which errors are worth another try and how long the API asked them to wait;
this module decides when, and when to give up, the same way for every cloud.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from machines.runtime import deadline as wall_clock
from machines.runtime.backoff import backoff

T = TypeVar("T")

log = logging.getLogger(__name__)


RetryAfter = Callable[[Exception], float | None]
"""Maps an error to None (final) or the seconds the API asked to wait (0: no opinion)."""

Observe = Callable[[Exception | None, bool], None]
"""Told of every try: its error (None: it succeeded), and whether another try follows."""


class GaveUp(Exception):
    """A retryable error persisted until the call's time was spent; ``last`` is the error."""

    def __init__(self, last: Exception, attempts: int, seconds: float) -> None:
        super().__init__(f"gave up after {attempts} attempts in {seconds:.1f} s: {last}")
        self.last = last
        self.attempts = attempts
        self.seconds = seconds


def call(
    fn: Callable[[], T],
    retry_after: RetryAfter,
    *,
    deadline: float,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    observe: Observe | None = None,
) -> T:
    """Run ``fn`` until it succeeds, fails for good, or ``deadline`` seconds are spent.

    A final error is raised as it is; a retryable one that outlasts the deadline is raised
    as ``GaveUp``. The wait honours what the API asked for when that fits in the time left;
    when it does not, plain backoff goes on, since a bucket that refills may let one through.
    Each try runs inside ``machines.runtime.deadline.bounded``: the clients cut its requests and
    body reads to the time left, so the last try ends when the call's time does. A try cut
    off so says only that time ran out: ``GaveUp.last`` is then the error of the try before
    it, the cloud's last answer, when there was one. ``observe`` hears of each try (the
    providers count them by outcome).
    """
    start = time.monotonic()
    attempt = 0
    answered: Exception | None = None
    while True:
        try:
            with wall_clock.bounded(deadline - (time.monotonic() - start)):
                result = fn()
        except Exception as error:
            asked = retry_after(error)
            if asked is None:
                _tell(observe, error, retried=False)
                raise
            elapsed = time.monotonic() - start
            if elapsed + asked >= deadline:
                asked = 0.0
            delay = max(asked, backoff(attempt))
            if elapsed + delay >= deadline:
                _tell(observe, error, retried=False)
                cut = elapsed >= deadline
                last = answered if cut and answered is not None else error
                raise GaveUp(last, attempt + 1, elapsed) from error
            answered = error
            _tell(observe, error, retried=True)
            log.warning(
                "%s failed (%s), retry %d in %.2f s", what, _brief(error), attempt + 1, delay
            )
            sleep(delay)
            attempt += 1
        else:
            _tell(observe, None, retried=False)
            return result


def _tell(observe: Observe | None, error: Exception | None, *, retried: bool) -> None:
    if observe is not None:
        observe(error, retried)


def _brief(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"[:200]
