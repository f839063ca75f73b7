"""A simulated autoscaler: rounds of create, list and delete across owners and pools.

It remembers what the provider told it and, at the end, the test compares that with what
the cloud really holds. Used against every provider, with faults switched on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from machines import MachineSpec, Provider, Status


@dataclass
class Ledger:
    """What the autoscaler was told: machine names per (owner, pool), and what it deleted.

    A deleted machine may still be listed for a while with status ``deleting``, as on the
    real API; the autoscaler counts it as gone.
    """

    alive: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    no_stock: int = 0
    rounds: int = 0

    def pool(self, owner: str, pool: str) -> dict[str, str]:
        return self.alive.setdefault((owner, pool), {})


def simulate(
    providers: dict[str, Provider],
    pools: list[str],
    machine_type: str,
    location: str,
    rounds: int,
    seed: int = 7,
) -> Ledger:
    """Run ``rounds`` autoscaler decisions; every answer is checked against the ledger."""
    rng = random.Random(seed)
    ledger = Ledger()
    serial = 0
    for _ in range(rounds):
        owner = rng.choice(sorted(providers))
        provider = providers[owner]
        pool = rng.choice(pools)
        known = ledger.pool(owner, pool)
        action = rng.choices(["create", "delete", "list"], weights=[5, 3, 2])[0]
        if action == "create" or not known:
            serial += 1
            name = f"{owner}-{pool}-a{serial}"
            created = provider.create(
                MachineSpec(name=name, machine_type=machine_type, location=location, pool=pool)
            )
            assert not created.failed, created.reason
            if created.ok:
                assert created.machine is not None
                known[created.machine.id] = name
            else:
                ledger.no_stock += 1
        elif action == "delete":
            machine_id = rng.choice(sorted(known))
            assert provider.delete(machine_id) is True
            del known[machine_id]
            ledger.deleted.add(machine_id)
        machines = provider.machines(pool)
        going = {m.id for m in machines if m.status == Status.DELETING}
        assert going <= ledger.deleted, f"{owner}/{pool}: {going - ledger.deleted} deleting unasked"
        listed = {m.id: m.name for m in machines if m.id not in going}
        assert listed == known, f"{owner}/{pool}: listed {listed}, told {known}"
        ledger.rounds += 1
    return ledger


@dataclass(frozen=True)
class Job:
    """One CI job: when it arrives (seconds into the run), its pool, and how long it needs a
    machine of that pool. A pipeline's job also names its pipeline and stage: a stage after
    the first arrives when the previous stage's jobs have all ended, which only the run
    knows (their wait for a machine included), so its ``at`` is the earliest it can come
    (no job waiting) and the run moves it on (``StageGate``)."""

    at: float
    pool: str
    seconds: float
    pipeline: int = -1
    stage: int = 0


@dataclass(frozen=True)
class Pipeline:
    """The shape of a push's pipeline, as CI systems run one: ``stages`` stages (a GitLab CI
    ``stages:`` list, or GitHub Actions jobs chained by ``needs:``), each of ``per_stage``
    jobs arriving together, the pipeline's jobs on ``pools`` distinct pools of the profile
    (its runners' tags: lint on one, builds on others), each job on one of them."""

    stages: tuple[int, int] = (1, 3)
    per_stage: tuple[int, int] = (1, 4)
    pools: tuple[int, int] = (1, 3)

    def mean_jobs(self) -> float:
        return (self.stages[0] + self.stages[1]) / 2 * (self.per_stage[0] + self.per_stage[1]) / 2


def ci_jobs(
    pools: list[str],
    hours: float,
    seed: int = 28,
    per_hour: float = 40,
    burst: tuple[int, int] = (1, 7),
    spread: float = 120.0,
    needs: tuple[float, float] = (300.0, 900.0),
    pipeline: Pipeline | None = None,
) -> list[Job]:
    """Seeded CI jobs as pushes bring them: pushes arrive at random (a Poisson process) so
    that ``per_hour`` jobs come an hour on average, each job needing its machine for
    ``needs`` seconds (uniform). Without ``pipeline`` (the single-stage model) each push goes
    to one pool (any of ``pools`` alike) with a burst of ``burst`` jobs arriving within
    ``spread`` seconds; with it, each push runs a pipeline of that shape (``Job.stage``,
    ``Job.pipeline``; a later stage's ``at`` as if no job waited). Oldest first."""
    rng = random.Random(seed)
    mean = pipeline.mean_jobs() if pipeline else (burst[0] + burst[1]) / 2
    pushes_per_second = per_hour / mean / 3600
    jobs: list[Job] = []
    at = 0.0
    serial = 0
    while True:
        at += rng.expovariate(pushes_per_second)
        if at >= hours * 3600:
            break
        if pipeline is None:
            pool = rng.choice(pools)
            for _ in range(rng.randint(*burst)):
                arrives = min(at + rng.uniform(0, spread), hours * 3600 - 1)
                jobs.append(Job(arrives, pool, rng.uniform(*needs)))
            continue
        serial += 1
        runners = rng.sample(pools, min(len(pools), rng.randint(*pipeline.pools)))
        starts = at
        for stage in range(rng.randint(*pipeline.stages)):
            stage_jobs = [
                Job(starts, rng.choice(runners), rng.uniform(*needs), serial, stage)
                for _ in range(rng.randint(*pipeline.per_stage))
            ]
            jobs += stage_jobs
            starts += max(job.seconds for job in stage_jobs)
    return sorted(jobs, key=lambda job: job.at)


class StageGate:
    """Holds a pipeline's later stages until the previous stage's jobs have all ended: the
    run tells it when each job got its machine and until when it runs (``started``), and
    takes the stages it lets through. Jobs without a pipeline pass at their ``at``."""

    def __init__(self, jobs: list[Job]) -> None:
        self.ready = sorted((j for j in jobs if j.stage == 0), key=lambda j: j.at)
        self._held: dict[tuple[int, int], list[Job]] = {}
        self._left: dict[tuple[int, int], int] = {}
        self._ends: dict[tuple[int, int], float] = {}
        for job in jobs:
            key = (job.pipeline, job.stage)
            if job.stage > 0:
                self._held.setdefault(key, []).append(job)
            self._left[key] = self._left.get(key, 0) + 1

    def arrived(self, elapsed: float) -> list[Job]:
        """The jobs arrived by ``elapsed`` seconds into the run, oldest first."""
        count = next((i for i, j in enumerate(self.ready) if j.at > elapsed), len(self.ready))
        arrived, self.ready = self.ready[:count], self.ready[count:]
        return arrived

    def started(self, job: Job, ends: float) -> None:
        """``job`` got its machine and ends ``ends`` seconds into the run; the last of its
        stage lets the next stage through at the stage's latest end."""
        if job.pipeline < 0:
            return
        key = (job.pipeline, job.stage)
        self._left[key] -= 1
        self._ends[key] = max(self._ends.get(key, 0.0), ends)
        following = self._held.pop((job.pipeline, job.stage + 1), [])
        if self._left[key] == 0 and following:
            self.ready += [replace(j, at=self._ends[key]) for j in following]
            self.ready.sort(key=lambda j: j.at)
        elif following:
            self._held[(job.pipeline, job.stage + 1)] = following

    def held(self) -> int:
        """The jobs not arrived yet (waiting for their time or their previous stage)."""
        return len(self.ready) + sum(len(held) for held in self._held.values())
