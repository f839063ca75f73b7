"""A short autoscaler's workload against the environment's Hetzner endpoint, its metrics
served for Prometheus: ``python -m testkit.workload``.

It serves with ``machines.prometheus.serve`` on a free port (first line: where), then
creates ``ci-1`` (cx23, fsn1) and ``ci-2`` (cx23, nbg1), lists pool ``ci``, asks
``keep_advice`` of its machines (each kept on its paid hour), deletes ``ci-1`` (its paid
time thrown away is counted), makes ``idle-1`` in pool ``idle`` and asks ``keep_advice`` of
it (it stays kept: the idle gauges have a point); where the environment names EC2's queue of
notices too (``ORCA_EC2_EVENTS_QUEUE``, at moto's server), it makes ``spot-1`` in pool
``spot`` on EC2, puts EC2's interruption warning of it on the bus (moto emits none) and lists
the pool (the notice is counted); then it prints ``done`` and serves until terminated. What
the clouds answer (faults, stock) is the test's to set beforehand.
"""

from __future__ import annotations

import os
import sys
import threading

from machines import Provider
from machines.prometheus import serve
from machines.runtime.clouds.ec2.settings import AWS_ENDPOINT_URL, ORCA_EC2_EVENTS_QUEUE
from machines.runtime.settings import ORCA_POOL_MARKET
from testkit import ec2_events
from testkit.ec2_events import interruption_warning
from testkit.specs import OWNER, spec


def main() -> int:
    port = serve(0)
    print(f"serving metrics on http://127.0.0.1:{port}/metrics", flush=True)
    provider = Provider.of("hetzner", owner=OWNER)
    made = provider.create(spec("ci-1"))
    provider.create(spec("ci-2", location="nbg1"))
    provider.keep_advice(provider.machines("ci"))
    if made.machine is not None:
        provider.delete(made.machine.id)
    provider.create(spec("idle-1", pool="idle"))
    provider.keep_advice(provider.machines("idle"))
    if os.environ.get(ORCA_EC2_EVENTS_QUEUE):
        spot = Provider.of("ec2", OWNER, {**os.environ, ORCA_POOL_MARKET: "spot=spot"})
        warned = spot.create(spec("spot-1", cloud="ec2", pool="spot"))
        if warned.machine is not None:
            ec2_events.put(os.environ[AWS_ENDPOINT_URL], interruption_warning(warned.machine.id))
        spot.machines("spot")
    print("done", flush=True)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
