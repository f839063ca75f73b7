import time

import pytest

from machines.runtime import deadline, retry
from machines.runtime.backoff import BASE_DELAY, MAX_DELAY, backoff


class Flaky(Exception):
    pass


class Broken(Exception):
    pass


def failing(times: int, error: Exception):
    calls = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error
        return "done"

    return fn, calls


def retry_flaky(error: Exception) -> float | None:
    return 0.0 if isinstance(error, Flaky) else None


def test_retryable_errors_are_retried_until_success():
    fn, calls = failing(3, Flaky())
    slept: list[float] = []
    assert retry.call(fn, retry_flaky, deadline=60, what="x", sleep=slept.append) == "done"
    assert len(calls) == 4
    assert len(slept) == 3


def test_final_errors_are_raised_at_once():
    fn, calls = failing(1, Broken())
    with pytest.raises(Broken):
        retry.call(fn, retry_flaky, deadline=60, what="x", sleep=lambda _: None)
    assert len(calls) == 1


def test_backoff_grows_and_is_jittered_within_bounds():
    for attempt in range(10):
        ceiling = min(MAX_DELAY, BASE_DELAY * 2**attempt)
        delays = {backoff(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1


def test_the_wait_the_api_asked_for_is_honoured():
    fn, _ = failing(1, Flaky())
    slept: list[float] = []
    retry.call(fn, lambda e: 7.0, deadline=60, what="x", sleep=slept.append)
    assert slept[0] >= 7.0


def test_an_api_wait_past_the_deadline_falls_back_to_backoff():
    fn, _ = failing(1, Flaky())
    slept: list[float] = []
    retry.call(fn, lambda e: 3600.0, deadline=60, what="x", sleep=slept.append)
    assert slept[0] <= BASE_DELAY


def test_gives_up_when_the_deadline_would_pass():
    fn, calls = failing(1000, Flaky())
    with pytest.raises(retry.GaveUp) as gave_up:
        retry.call(fn, retry_flaky, deadline=0.5, what="x", sleep=lambda _: None)
    assert isinstance(gave_up.value.last, Flaky)
    assert gave_up.value.attempts == len(calls)


def test_a_last_try_cut_off_by_the_deadline_reports_the_clouds_last_answer():
    calls = []
    begun = time.monotonic()

    def fn() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise Flaky("busy")
        while time.monotonic() < begun + 2.0:  # the second try outlasts the call's deadline
            time.sleep(0.05)
        raise TimeoutError("cut off")

    with pytest.raises(retry.GaveUp) as gave_up:
        retry.call(fn, lambda e: 0.0, deadline=2.0, what="x", sleep=lambda _: None)

    assert str(gave_up.value.last) == "busy"
    assert gave_up.value.attempts == 2


def test_each_try_sees_the_time_left_of_the_call_and_requests_are_cut_to_it():
    seen: list[tuple[float | None, float]] = []

    def fn() -> str:
        seen.append((deadline.left(), deadline.timeout(10.0)))
        return "done"

    retry.call(fn, retry_flaky, deadline=3, what="x")
    left, request = seen[0]
    assert left is not None
    assert left <= 3
    assert request <= 3
    assert deadline.left() is None
