"""What the OpenTelemetry instrumentation costs: imports, and calls with it on and off.

Each figure comes from a fresh interpreter. ``off`` runs the runtime as it was before the
instrumentation (``--baseline``, exported with ``git archive``); ``no-op`` is this code with
the API alone (no SDK configured, as an application that installs none), once with the SDK
importable and once with it blocked; ``metrics`` and ``metrics+traces`` install the SDK
(an in-memory metric reader; spans through a batch processor to an in-memory exporter).
Calls go to the emulator over loopback (emptied before each run); times are medians, the
best of the rounds: read them as ratios.

    python -m bench.telemetry [--calls 300] [--repeat 5] [--rounds 3] [--baseline main]
"""

# ruff: noqa: PLC0415 (each worker imports the runtime only once its OpenTelemetry is set up)

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "b" * 64
MODES = ("off", "no-op, SDK blocked", "no-op", "metrics", "metrics+traces")


def _install(mode: str) -> None:
    """Set up the worker's OpenTelemetry as ``mode`` says, before the runtime is used."""
    if mode == "no-op, SDK blocked":
        sys.modules["opentelemetry.sdk"] = None  # type: ignore[assignment]
        return
    if mode not in {"metrics", "metrics+traces"}:
        return
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    if mode == "metrics+traces":
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
        trace.set_tracer_provider(tracer_provider)


def _median_per_call(action: Callable[[], object], calls: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            action()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def worker(mode: str, endpoint: str, calls: int, repeat: int) -> dict[str, float]:
    """Per-call seconds of ``machines(pool)`` (one GET) and of a create and delete pair."""
    _install(mode)
    from machines import MachineSpec, Provider

    environ = {"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": endpoint, "ORCA_LIST_TTL": "0"}
    provider = Provider.of("hetzner", "bench", environ)
    for _ in range(20):
        provider.machines("ci")
    listing = _median_per_call(lambda: provider.machines("ci"), calls, repeat)
    count = iter(range(10**9))

    def create_and_delete() -> None:
        made = provider.create(
            MachineSpec(name=f"b-{next(count)}", machine_type="cx23", location="fsn1", pool="ci")
        )
        assert made.machine is not None, made.reason
        provider.delete(made.machine.id)

    create_and_delete()
    pairs = _median_per_call(create_and_delete, max(10, calls // 10), repeat)
    return {"machines": listing, "create+delete": pairs}


def micro(mode: str, calls: int) -> float:
    """Seconds the instrumentation of one request takes alone (span, duration, try)."""
    _install(mode)
    from machines.runtime import telemetry

    def one() -> None:
        with telemetry.http_request(
            "hetzner",
            "GET",
            "http://127.0.0.1:1/v1/servers",
            "GET /servers",
            span_name="GET /v1/servers",
            url_template="/v1/servers",
        ) as request:
            request.answered(200)
        telemetry.tried("hetzner", "GET /servers", "ok", False)

    for _ in range(1000):
        one()
    return _median_per_call(one, calls, 5)


def _run(args: list[str], cwd: Path, pythonpath: list[Path]) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath)}
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def import_seconds(imports: dict[str, tuple[str, Path]], repeat: int) -> dict[str, float]:
    """Per name, the fastest wall time of a fresh interpreter running its code, less the
    interpreter's own start; the runs take turns, so a busy moment hits every one alike."""

    def run(source: str, cwd: Path) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", source], cwd=cwd, check=True)
        return time.perf_counter() - start

    fastest = dict.fromkeys(["", *imports], float("inf"))
    for _ in range(repeat):
        fastest[""] = min(fastest[""], run("import sys", ROOT))
        for name, (code, cwd) in imports.items():
            fastest[name] = min(fastest[name], run(code, cwd))
    return {name: fastest[name] - fastest[""] for name in imports}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="runs of every mode, in turn")
    parser.add_argument("--baseline", default="main", help="the revision before the change")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--micro", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.endpoint, args.calls, args.repeat)))
        return 0
    if args.micro:
        print(json.dumps(micro(args.micro, args.calls * 100)))
        return 0

    from emulator.process import running_emulator

    with tempfile.TemporaryDirectory() as scratch:
        before = Path(scratch)
        revision = subprocess.run(
            ["git", "-C", str(ROOT), "merge-base", "HEAD", args.baseline],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", revision, "machines"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        print(f"baseline: {revision[:12]} ({args.baseline})\n")

        print("| import (fresh interpreter, less its start; fastest of 15) | seconds |")
        print("| --- | ---: |")
        imports = {
            "hcloud": ("import hcloud", ROOT),
            "machines, before": ("import machines", before),
            "machines": ("import machines", ROOT),
            "opentelemetry.metrics and .trace (the API)": (
                "import opentelemetry.metrics, opentelemetry.trace",
                ROOT,
            ),
            "the Hetzner provider, before": (
                "import machines.runtime.clouds.hetzner.provider",
                before,
            ),
            "the Hetzner provider": ("import machines.runtime.clouds.hetzner.provider", ROOT),
        }
        took = import_seconds(imports, 15)
        for name, seconds in took.items():
            print(f"| {name} | {seconds * 1000:.0f} ms |")
        print(f"\nimport machines / import hcloud: {took['machines'] / took['hcloud']:.2f}x")

        with running_emulator(TOKEN, "--boot-seconds", "0") as emulator:
            results: dict[str, dict[str, float]] = {}
            for mode in [m for _ in range(args.rounds) for m in MODES]:
                code = before if mode == "off" else ROOT
                emulator.control.reset()
                line = _run(
                    [
                        "-m",
                        "bench.telemetry",
                        "--worker",
                        mode,
                        "--endpoint",
                        emulator.url,
                        "--calls",
                        str(args.calls),
                        "--repeat",
                        str(args.repeat),
                    ],
                    code,
                    [code, ROOT],
                )
                found = json.loads(line)
                best = results.setdefault(mode, found)
                results[mode] = {call: min(best[call], found[call]) for call in found}
        print(f"\n| per call (best of {args.rounds} rounds' medians) | " + " | ".join(MODES) + " |")
        print("| --- |" + " ---: |" * len(MODES))
        for call in ("machines", "create+delete"):
            off = results["off"][call]
            cells = [
                f"{results[m][call] * 1e3:.2f} ms ({results[m][call] / off:.2f}x)" for m in MODES
            ]
            print(f"| {call} | " + " | ".join(cells) + " |")

        print("\n| the instrumentation of one request alone | mode | per request |")
        print("| --- | --- | ---: |")
        micro_modes = ("no-op, SDK blocked", "no-op", "metrics", "metrics+traces")
        alone = dict.fromkeys(micro_modes, float("inf"))
        for mode in [m for _ in range(args.rounds) for m in micro_modes]:
            command = ["-m", "bench.telemetry", "--micro", mode, "--calls", str(args.calls)]
            alone[mode] = min(alone[mode], json.loads(_run(command, ROOT, [ROOT])))
        for mode, seconds in alone.items():
            print(f"| span, duration and try | {mode} | {seconds * 1e6:.1f} µs |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
