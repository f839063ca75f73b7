"""``machines.runtime.paid``: the advice's order, margin and what it leaves out; the jobs the
benchmark runs (``testkit.simulation.ci_jobs``)."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from machines.runtime.models import Ending, Machine, Status
from machines.runtime.paid import advise
from testkit.simulation import Pipeline, StageGate, ci_jobs

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


def test_a_machine_under_notice_goes_first_among_those_due_now():
    warned = machine("9").model_copy(update={"ending": Ending.INTERRUPTING})

    advice = advise([machine("1"), warned], NOW, paid_for({"1": 1, "9": 50}), margin=120)

    assert [(a.machine.id, a.release) for a in advice] == [("9", True), ("1", True)]


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


@pytest.mark.parametrize("tick", [-1.0, float("nan")])
def test_a_tick_that_is_no_number_of_seconds_is_refused(tick: float):
    with pytest.raises(ValueError, match="tick is the seconds between the autoscaler's looks"):
        advise([machine("1")], NOW, paid_for({"1": 50}), tick=tick)


def test_with_a_tick_each_machine_goes_at_the_last_look_before_its_release():
    advice = advise(
        [machine("1"), machine("2"), machine("3")],
        NOW,
        paid_for({"1": 50, "2": 5, "3": 2}),
        margin=120,
        tick=600,
    )

    # 50 min paid: release due at 48 min, the last look before it at 40; 5 min paid: due at
    # 3 min, the next look (10 min) too late: now; 2 min: within the margin already
    assert [(a.machine.id, a.keep_for, a.release) for a in advice] == [
        ("2", 0, True),
        ("3", 0, True),
        ("1", 2400, False),
    ]
    assert advice[2].release_at == NOW + timedelta(minutes=40)


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


POOLS = [f"p{i:02d}" for i in range(20)]


def test_pipelines_are_seeded_about_forty_jobs_an_hour_in_stages_over_a_few_pools():
    jobs = ci_jobs(POOLS, hours=20, pipeline=Pipeline())

    assert jobs == ci_jobs(POOLS, hours=20, pipeline=Pipeline())
    assert jobs != ci_jobs(POOLS, hours=20, pipeline=Pipeline(), seed=29)
    assert 20 * 30 <= len(jobs) <= 20 * 50
    assert all(300 <= j.seconds <= 900 for j in jobs)
    stages: dict[tuple[int, int], list] = {}
    for job in jobs:
        stages.setdefault((job.pipeline, job.stage), []).append(job)
    pipelines = {job.pipeline for job in jobs}
    assert {s for _, s in stages} == {0, 1, 2}
    assert all(1 <= len(stage) <= 4 for stage in stages.values())
    assert all(len({j.at for j in stage}) == 1 for stage in stages.values())
    pools_of = {p: {j.pool for j in jobs if j.pipeline == p} for p in pipelines}
    assert max(len(pools) for pools in pools_of.values()) == 3
    assert any(len(pools) > 1 for pools in pools_of.values())


def test_a_later_stage_comes_at_the_earliest_when_the_previous_stage_ends():
    jobs = ci_jobs(POOLS, hours=10, pipeline=Pipeline())
    stages: dict[tuple[int, int], list] = {}
    for job in jobs:
        stages.setdefault((job.pipeline, job.stage), []).append(job)

    for (pipeline, stage), stage_jobs in stages.items():
        if stage > 0:
            before = stages[(pipeline, stage - 1)]
            assert stage_jobs[0].at == max(j.at + j.seconds for j in before)


def test_the_gate_lets_a_stage_through_when_the_last_job_of_the_previous_one_ends():
    jobs = [j for j in ci_jobs(POOLS, hours=10, pipeline=Pipeline()) if j.pipeline == 1]
    first = [j for j in jobs if j.stage == 0]
    second = [j for j in jobs if j.stage == 1]
    assert second, "pipeline 1 of this seed has two stages"
    gate = StageGate(jobs)

    assert gate.arrived(first[0].at - 1) == []
    assert gate.arrived(first[0].at) == first
    for n, job in enumerate(first):  # each started late, after a wait for a machine
        gate.started(job, first[0].at + 2000 + n)
        if n < len(first) - 1:
            assert gate.arrived(10**9) == []
    ends = first[0].at + 2000 + len(first) - 1
    assert gate.arrived(ends - 1) == []
    assert [(j.at, j.pool, j.stage) for j in gate.arrived(ends)] == [
        (ends, j.pool, 1) for j in second
    ]
    assert gate.held() == len(jobs) - len(first) - len(second)


def test_single_stage_jobs_pass_the_gate_at_their_time():
    jobs = ci_jobs(POOLS, hours=2)
    gate = StageGate(jobs)

    assert all(j.stage == 0 and j.pipeline == -1 for j in jobs)
    assert gate.arrived(jobs[-1].at) == jobs
    assert gate.held() == 0
