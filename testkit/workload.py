"""A short autoscaler's workload against the environment's Hetzner endpoint, its metrics
served for Prometheus: ``python -m testkit.workload``.

It serves with ``machines.prometheus.serve`` on a free port (first line: where), then
creates ``ci-1`` (cx23, fsn1) and ``ci-2`` (cx23, nbg1), lists pool ``ci``, asks
``keep_advice`` of its machines (each kept on its paid hour), deletes ``ci-1`` (its paid
time thrown away is counted), makes ``idle-1`` in pool ``idle`` and asks ``keep_advice`` of
it (it stays kept: the idle gauges have a point) and prints ``done``; it serves until
terminated. What the cloud answers (faults, stock) is the test's to set on the emulator
beforehand.
"""

from __future__ import annotations

import sys
import threading

from machines import Provider
from machines.prometheus import serve
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
    print("done", flush=True)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
