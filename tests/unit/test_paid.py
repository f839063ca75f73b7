"""``machines.paid``: the advice's order, margin and what it leaves out; the jobs the
benchmark runs (``testkit.simulation.ci_jobs``)."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from machines.models import Machine, Status
from machines.paid import advise
from testkit.simulation import ci_jobs

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def machine(machine_id: str, status: Status = Status.RUNNING, managed_by: str = "") -> Machine:
    return Machine(
        id=machine_id,
        name=f"ci-{machine_id}",
        status=status,
        machine_type="cx23",
        location="fsn1",
        address="",
        pool="ci",
        managed_by=managed_by,
        created=NOW - timedelta(minutes=10),
    )


def paid_for(minutes: dict[str, int]):
    def paid_until(m: Machine, now: datetime) -> datetime | None:
        left = minutes.get(m.id)
        return None if left is None else now + timedelta(minutes=left)

    return paid_until


def test_the_machine_whose_paid_time_ends_first_goes_first():
    advice = advise(
        [machine("1"), machine("2"), machine("3")], NOW, paid_for({"1": 50, "2": 5, "3": 30})
    )

    assert [a.machine.id for a in advice] == ["2", "3", "1"]
    assert [a.keep_for for a in advice] == [180, 1680, 2880]
    assert [a.release for a in advice] == [False, False, False]


def test_within_the_margin_or_unknown_it_goes_now():
    advice = advise([machine("1"), machine("2")], NOW, paid_for({"1": 1}), margin=120)

    assert [(a.machine.id, a.keep_for, a.release_at, a.release) for a in advice] == [
        ("1", 0, NOW, True),
        ("2", 0, NOW, True),
    ]
    assert advice[1].paid_until is None


def test_going_and_stack_machines_get_no_advice_failed_ones_go_now():
    idle = [
        machine("1", Status.DELETING),
        machine("2", managed_by="pulumi"),
        machine("3", Status.FAILED),
    ]

    (advice,) = advise(idle, NOW, paid_for({"1": 50, "2": 50, "3": 50}))

    assert advice.machine.id == "3"
    assert advice.release


def test_a_negative_margin_is_refused():
    with pytest.raises(ValueError, match="margin"):
        advise([], NOW, paid_for({}), margin=-1)


def test_the_jobs_are_seeded_about_forty_an_hour_in_bursts_of_one_pool():
    pools = [f"p{i:02d}" for i in range(20)]
    jobs = ci_jobs(pools, hours=10)

    assert jobs == ci_jobs(pools, hours=10)
    assert 300 <= len(jobs) <= 500
    assert all(300 <= j.seconds <= 900 for j in jobs)
    assert [j.at for j in jobs] == sorted(j.at for j in jobs)
    bursts = sum(1 for a, b in itertools.pairwise(jobs) if b.at - a.at < 120 and a.pool == b.pool)
    assert bursts >= len(jobs) / 2


def test_a_pool_name_or_one_machine_instead_of_machines_is_one_clear_error():
    with pytest.raises(TypeError, match=r"keep_advice takes the idle machines .*'ci'"):
        advise("ci", NOW, paid_for({}))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keep_advice takes the idle machines"):
        advise(machine("1"), NOW, paid_for({}))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Machine values, not '4711'"):
        advise(["4711"], NOW, paid_for({}))  # type: ignore[list-item]
