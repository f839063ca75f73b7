"""Load: many threads sharing one provider, creating, listing and deleting, on loopback.

Each thread owns a pool and repeats create -> machines(pool) -> delete until its share of
``--operations`` is done or ``--seconds`` have passed. The Hetzner runs go to the emulator
(``emulator.process.running_emulator``), the EC2 runs to moto's server; each run starts
from an empty cloud. Every run is made once with one thread and once with ``--threads``,
so the table shows what sharing a provider between threads buys.

Retries are the WARNING records of ``machines.runtime.retry``; API requests
are the emulator's count (Hetzner) or the provider's client's sends (EC2, retries included).
``--faults`` switches on a modest mix of errors, lost answers and throttling.

``--latency`` makes every answer take that long, as a real API's over a network does: on
loopback the emulators answer in a millisecond or two and their own CPU is the limit.

    python -m bench.load [--threads 16] [--operations 480] [--cloud both] [--faults]
                         [--latency MS] [--seconds 120]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from emulator.process import Emulator, running_emulator
from machines.runtime.models import MachineSpec
from machines.runtime.provider import Provider
from testkit import hetzner, moto_server
from testkit.fault_proxy import Fault, FaultProxy, Kind
from testkit.specs import ec2_spec, spec

TOKEN = hetzner.token("load")
OPERATIONS = ("create", "list", "delete")
TIMEOUTS = {"ORCA_REQUEST_TIMEOUT": "2", "ORCA_CALL_TIMEOUT": "20"}

HETZNER_FAULTS: list[dict[str, Any]] = [
    {"kind": "error", "method": "POST", "path": "/v1/servers", "status": 503,
     "code": "service_error", "probability": 0.05},
    {"kind": "drop_after", "method": "POST", "path": "/v1/servers", "probability": 0.02},
    {"kind": "error", "method": "GET", "path": "/v1/servers", "status": 429,
     "code": "rate_limit_exceeded", "probability": 0.02},
    {"kind": "drop_before", "method": "GET", "path": "/v1/servers", "probability": 0.02},
    {"kind": "error", "method": "DELETE", "path": "/v1/servers", "status": 423,
     "code": "locked", "probability": 0.05},
]  # fmt: skip
"""About one request in twenty-five goes wrong."""


@dataclass
class Run:
    """What one run measured."""

    cloud: str
    threads: int
    faults: bool
    latency: float
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: {o: [] for o in OPERATIONS})
    failures: int = 0
    retries: int = 0
    requests: int = 0

    @property
    def operations(self) -> int:
        return sum(len(times) for times in self.latencies.values())

    @property
    def throughput(self) -> float:
        return self.operations / self.seconds if self.seconds else 0.0


class RetryCounter(logging.Handler):
    """Counts the retries the providers log."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self._count_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        if "retry" in record.getMessage():
            with self._count_lock:
                self.count += 1


@contextmanager
def counting_retries() -> Iterator[RetryCounter]:
    counter = RetryCounter()
    loggers = [logging.getLogger(name) for name in ("machines.runtime.retry",)]
    for logger in loggers:
        logger.addHandler(counter)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
    try:
        yield counter
    finally:
        for logger in loggers:
            logger.removeHandler(counter)
            logger.setLevel(logging.NOTSET)
            logger.propagate = True


def work(
    provider: Provider,
    spec_of: Callable[[str, str], MachineSpec],
    run: Run,
    cycles: int,
    deadline: float,
) -> None:
    """Every thread: its own pool, ``cycles`` rounds of create, list and delete."""
    lock = threading.Lock()

    def timed(operation: str, call: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return call()
        finally:
            with lock:
                run.latencies[operation].append(time.perf_counter() - start)

    def worker(index: int) -> None:
        pool = f"load{index}"
        for cycle in range(cycles):
            if time.monotonic() > deadline:
                return
            spec = spec_of(f"{pool}-{cycle}", pool)
            created = timed("create", partial(provider.create, spec))
            timed("list", partial(provider.machines, pool))
            if created.machine is None:
                with lock:
                    run.failures += 1
                continue
            timed("delete", partial(provider.delete, created.machine.id))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(run.threads)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.seconds = time.perf_counter() - start


def hetzner_run(
    emulator: Emulator, threads: int, cycles: int, faults: bool, latency: float, limit: float
) -> Run:
    emulator.control.reset()
    emulator.control.set_rate_limit(limit=1_000_000, per_second=1_000_000)
    environ = {"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": emulator.url, **TIMEOUTS}
    provider = Provider.of("hetzner", "bench", environ)
    provider.arch("cx23")
    emulator.control.reset_requests()
    delay = [{"kind": "delay", "seconds": latency}] if latency else []
    emulator.control.set_faults(delay + (HETZNER_FAULTS if faults else []))

    def spec_of(name: str, pool: str) -> MachineSpec:
        return spec(name, pool=pool)

    run = Run("hetzner", threads, faults, latency)
    with counting_retries() as retries:
        work(provider, spec_of, run, cycles, time.monotonic() + limit)
    emulator.control.clear_faults()
    run.retries = retries.count
    run.requests = emulator.control.requests().total
    return run


EC2_FAULTS: tuple[tuple[Kind, str, dict[str, Any]], ...] = (
    ("error", "RunInstances", {"status": 503, "code": "Unavailable", "probability": 0.05}),
    ("drop_after", "RunInstances", {"probability": 0.02}),
    ("error", "DescribeInstances", {"status": 503, "code": "RequestLimitExceeded",
                                    "probability": 0.02}),
    ("drop_before", "DescribeInstances", {"probability": 0.02}),
    ("drop_after", "TerminateInstances", {"probability": 0.05}),
)  # fmt: skip


def ec2_run(
    moto: moto_server.MotoServer,
    threads: int,
    cycles: int,
    faults: bool,
    latency: float,
    limit: float,
) -> Run:
    world = moto.new_world()
    with ExitStack() as stack:
        endpoint = moto.url
        if faults or latency:
            proxy = stack.enter_context(FaultProxy(moto.url).serving())
            rules = [Fault(kind, action, **rest) for kind, action, rest in EC2_FAULTS]
            delay = [Fault("delay", seconds=latency)] if latency else []
            proxy.set_faults(*(rules if faults else []), *delay)
            endpoint = proxy.url
        environ = {**world.env, "AWS_ENDPOINT_URL": endpoint, **TIMEOUTS}
        provider = moto_server.ec2_provider("bench", environ)
        provider.arch("t3.micro")
        sends = [0]
        sends_lock = threading.Lock()

        def count(**_: Any) -> None:
            with sends_lock:
                sends[0] += 1

        provider._client.meta.events.register("before-send.ec2", count)

        def spec_of(name: str, pool: str) -> MachineSpec:
            return ec2_spec(name, pool=pool)

        run = Run("ec2", threads, faults, latency)
        with counting_retries() as retries:
            work(provider, spec_of, run, cycles, time.monotonic() + limit)
        run.retries = retries.count
        run.requests = sends[0]
    return run


def percentile(times: list[float], share: float) -> float:
    if not times:
        return float("nan")
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] * 1000


def table(runs: list[Run]) -> str:
    lines = [
        "| cloud | API latency | faults | threads | operations | seconds | ops/s "
        "| create p50 / p99 ms | list p50 / p99 ms | delete p50 / p99 ms | retries "
        "| API requests / op | failed |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        cells = [
            f"{statistics.median(run.latencies[o]) * 1000:.1f} / "
            f"{percentile(run.latencies[o], 0.99):.1f}"
            if run.latencies[o]
            else "-"
            for o in OPERATIONS
        ]
        per_op = run.requests / run.operations if run.operations else 0.0
        lines.append(
            f"| {run.cloud} | {run.latency * 1000:.0f} ms | {'on' if run.faults else 'off'} "
            f"| {run.threads} | {run.operations} | {run.seconds:.1f} | {run.throughput:.1f} | "
            + " | ".join(cells)
            + f" | {run.retries} | {per_op:.2f} | {run.failures} |"
        )
    return "\n".join(lines)


def speedups(runs: list[Run]) -> str:
    lines = []
    for many in runs:
        one = next((r for r in runs if (r.cloud, r.threads) == (many.cloud, 1)), None)
        if one is not None and many.threads > 1 and one.throughput:
            lines.append(
                f"- {many.cloud}: {many.threads} threads do "
                f"{many.throughput / one.throughput:.1f}x the operations per second of one thread"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument(
        "--operations", type=int, default=480, help="calls per run (create, list, delete)"
    )
    parser.add_argument("--cloud", choices=["hetzner", "ec2", "both"], default="both")
    parser.add_argument("--faults", action="store_true", help="inject a modest mix of faults")
    parser.add_argument(
        "--latency",
        type=float,
        default=0.0,
        help="milliseconds the cloud takes to answer each request, as a real API over a network",
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="time limit of each run")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    cycles_of = {n: max(1, args.operations // (3 * n)) for n in (1, args.threads)}
    latency = args.latency / 1000
    runs: list[Run] = []
    with ExitStack() as stack:
        if args.cloud in ("hetzner", "both"):
            emulator = stack.enter_context(
                running_emulator(TOKEN, "--boot-seconds", "0.2", "--quiet")
            )
            for threads in (1, args.threads):
                runs.append(
                    hetzner_run(
                        emulator, threads, cycles_of[threads], args.faults, latency, args.seconds
                    )
                )
        if args.cloud in ("ec2", "both"):
            workdir = stack.enter_context(tempfile.TemporaryDirectory())
            moto = stack.enter_context(moto_server.running(Path(workdir)))
            for threads in (1, args.threads):
                runs.append(
                    ec2_run(moto, threads, cycles_of[threads], args.faults, latency, args.seconds)
                )
    print(table(runs))
    print()
    print(speedups(runs))


if __name__ == "__main__":
    main()
