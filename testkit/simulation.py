"""A simulated autoscaler: rounds of create, list and delete across owners and pools.

It remembers what the provider told it and, at the end, the test compares that with what
the cloud really holds. Used against every provider, with faults switched on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

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
    machine of that pool."""

    at: float
    pool: str
    seconds: float


def ci_jobs(
    pools: list[str],
    hours: float,
    seed: int = 28,
    per_hour: float = 40,
    burst: tuple[int, int] = (1, 7),
    spread: float = 120.0,
    needs: tuple[float, float] = (300.0, 900.0),
) -> list[Job]:
    """Seeded CI jobs as pushes bring them: pushes arrive at random (a Poisson process) so
    that ``per_hour`` jobs come an hour on average, each push to one pool (any of ``pools``
    alike) with a burst of ``burst`` jobs arriving within ``spread`` seconds, each needing
    its machine for ``needs`` seconds (uniform). Oldest first."""
    rng = random.Random(seed)
    pushes_per_second = per_hour / ((burst[0] + burst[1]) / 2) / 3600
    jobs: list[Job] = []
    at = 0.0
    while True:
        at += rng.expovariate(pushes_per_second)
        if at >= hours * 3600:
            break
        pool = rng.choice(pools)
        for _ in range(rng.randint(*burst)):
            arrives = min(at + rng.uniform(0, spread), hours * 3600 - 1)
            jobs.append(Job(arrives, pool, rng.uniform(*needs)))
    return sorted(jobs, key=lambda job: job.at)
