"""A pool that spans clouds: requests and time from "its first places have no stock" to a
running machine elsewhere, by the spanning provider and by an autoscaler that tries the
places itself with one provider per cloud.

The pool is ``testkit.span.PLACES`` (Hetzner's cax11 in fsn1, then nbg1, then EC2's
t4g.micro); both Hetzner places are out of stock in the emulator, EC2 (moto behind the
fault proxy) has stock. Requests are counted by the emulator (what crossed the wire) and by
the proxy, for the create calls alone; the time runs from the first create call until the
machine is listed ``running`` (``ORCA_LIST_TTL=0``; the emulator boots at once, moto's
instances run at once), the listings' requests left out of the counts.
Each way is measured twice: the first create after the stock ran out, by a provider whose
catalogue was read before (so Hetzner is asked and refuses), and the next create (what the
provider remembers). Prints a Markdown table.

    python -m bench.span
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from emulator.process import Emulator
from machines import Machine, MachineSpec, Provider, Status
from machines.runtime.models import Created
from machines.runtime.pool import Place
from testkit import hetzner, moto_server
from testkit.fault_proxy import FaultProxy
from testkit.span import PLACES, POOL, pools_json

FSN1, NBG1, EC2 = PLACES
Row = tuple[str, str, int, int, float]


@contextmanager
def clouds() -> Iterator[tuple[Emulator, FaultProxy, dict[str, str]]]:
    """The emulator, moto behind the proxy, and the environment pointing at both."""
    with (
        tempfile.TemporaryDirectory() as workdir,
        moto_server.running(Path(workdir)) as moto,
        FaultProxy(moto.url).serving() as proxy,
        hetzner.running("--seed", "7") as emulator,
    ):
        world = moto_server.build_world(moto.url)
        environ = {
            **world.env,
            **hetzner.environment(emulator),
            "AWS_ENDPOINT_URL": proxy.url,
            "ORCA_LIST_TTL": "0",
        }
        os.environ.update(moto_server.CREDENTIALS)
        yield emulator, proxy, environ


def spec(name: str, place: Place = FSN1) -> MachineSpec:
    return MachineSpec(
        name=name, machine_type=place.machine_type, location=place.location, pool=POOL
    )


def running(machines: Callable[[], list[Machine]], name: str) -> None:
    """Until ``name`` is listed running (bounded: the clouds run machines at once)."""
    for _ in range(200):
        if any(m.name == name and m.status == Status.RUNNING for m in machines()):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{name} never ran")


Make = Callable[[str], tuple[Created, Provider]]
"""A way to make machine ``name``: the create's answer, and the provider that lists it."""


def spanning(environ: Mapping[str, str], owner: str) -> Make:
    """The spanning provider's way: one create of the pool's first place."""
    provider = Provider.of("hetzner", owner, {**environ, "ORCA_POOLS": pools_json()})
    provider.arch(FSN1.machine_type)  # its catalogue read while the places had stock

    def make(name: str) -> tuple[Created, Provider]:
        return provider.create(spec(name)), provider

    return make


def by_hand(environ: Mapping[str, str], owner: str) -> Make:
    """An autoscaler that knows the places and tries each with its cloud's provider."""
    one_cloud = {**environ, "ORCA_POOLS": json.dumps([{"name": POOL}])}
    providers = {kind: Provider.of(kind, owner, one_cloud) for kind in ("hetzner", "ec2")}
    providers["hetzner"].arch(FSN1.machine_type)

    def make(name: str) -> tuple[Created, Provider]:
        for place in PLACES:
            provider = providers[place.cloud]
            created = provider.create(spec(name, place))
            if not created.no_stock:
                break
        return created, provider

    return make


def measure(
    rows: list[Row], label: str, emulator: Emulator, proxy: FaultProxy, make: Make, name: str
) -> None:
    hetzner_before, ec2_before = emulator.control.requests().total, sum(proxy.requests.values())
    started = time.perf_counter()
    created, provider = make(name)
    hetzner_requests = emulator.control.requests().total - hetzner_before
    ec2_requests = sum(proxy.requests.values()) - ec2_before
    if created.ok:
        running(lambda: list(provider.machines(POOL)), name)
    took = time.perf_counter() - started
    where = created.machine.cloud if created.machine is not None else created.outcome
    rows.append((label, where, hetzner_requests, ec2_requests, took))


CATALOGUES = {"catalogue kept": "60", "catalogue read again": "0"}
"""``ORCA_OFFERS_TTL`` of each run: Hetzner's catalogue read before the stock ran out and
kept (its default window), or read again at every question (its window passed)."""


def main() -> None:
    rows: list[Row] = []
    with clouds() as (emulator, proxy, environ):
        emulator.control.set_timing(boot_seconds=0, action_seconds=0)
        ways = (("spanning provider", spanning), ("autoscaler tries places", by_hand))
        for catalogue, ttl in CATALOGUES.items():
            for label, way in ways:
                emulator.control.set_stock([])
                owner = f"{label.split()[0]}{ttl}"
                make = way({**environ, "ORCA_OFFERS_TTL": ttl}, owner)
                row = f"{label}, {catalogue}"
                measure(rows, f"{row}: a first create, all in stock", emulator, proxy, make,
                        f"{owner}-0")  # fmt: skip
                out = [{"server_type": p.machine_type, "location": p.location} for p in PLACES[:2]]
                emulator.control.set_stock(out)
                measure(rows, f"{row}: first create after Hetzner ran out", emulator, proxy,
                        make, f"{owner}-1")  # fmt: skip
                measure(rows, f"{row}: next create", emulator, proxy, make, f"{owner}-2")
    print("| way | made on | Hetzner requests | EC2 requests | create to running |")
    print("|---|---|---:|---:|---:|")
    for label, where, on_hetzner, on_ec2, took in rows:
        print(f"| {label} | {where} | {on_hetzner} | {on_ec2} | {took * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
