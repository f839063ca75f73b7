"""The runtime's instruments on a Prometheus endpoint: ``orca-machines metrics`` and ``serve``.

The runtime reports through the OpenTelemetry API only; this is the application's side, which
installs the SDK with its Prometheus exporter (the ``prometheus`` extra: opentelemetry-sdk,
opentelemetry-exporter-prometheus, prometheus-client). An autoscaler calls ``serve`` once at
start; ``orca-machines metrics`` serves and keeps a provider watching its pools, so the
budget, the listing and the stock memory are there to scrape without an autoscaler.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from machines.runtime.errors import MachinesError
from machines.runtime.provider import Provider

DEFAULT_PORT = 9464
"""The port OpenTelemetry's Prometheus exporter uses by default."""

SERVICE_NAME = "orca-machines"

MISSING = (
    "serving metrics needs the OpenTelemetry SDK and its Prometheus exporter: "
    "pip install 'orca-machines[prometheus]' (opentelemetry-sdk, "
    "opentelemetry-exporter-prometheus, prometheus-client)"
)


def serve(port: int = DEFAULT_PORT, address: str = "127.0.0.1") -> int:
    """Install the SDK's meter provider, read by the Prometheus exporter, as the process's
    global one, and serve ``/metrics`` on ``address:port`` from a daemon thread; the port
    served (``port`` 0: a free one). Call it once per process, before or after providers
    are made: their instruments follow the global provider."""
    try:
        from opentelemetry import metrics  # noqa: PLC0415 (the SDK loads for serving only)
        from opentelemetry.exporter.prometheus import PrometheusMetricReader  # noqa: PLC0415
        from opentelemetry.sdk.metrics import MeterProvider  # noqa: PLC0415
        from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
        from prometheus_client import start_http_server  # noqa: PLC0415
    except ImportError:
        raise MachinesError(MISSING) from None
    try:
        server, _thread = start_http_server(port, addr=address)
    except OSError as error:
        raise MachinesError(
            f"cannot serve metrics on {address}:{port}: {error.strerror or error}: "
            "choose another --port or --address"
        ) from None
    resource = Resource.create({"service.name": SERVICE_NAME})
    metrics.set_meter_provider(
        MeterProvider(metric_readers=[PrometheusMetricReader()], resource=resource)
    )
    served: int = server.server_port
    return served


def watch(
    provider: Provider,
    pools: Sequence[str],
    every: float,
    report: Callable[[str], Any],
    *,
    rounds: int = 0,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """List ``pools`` every ``every`` seconds (``rounds`` times; 0: until stopped) and
    ``report`` one line per round. A round's failure is reported and the next one goes on,
    as the metrics count it."""
    done = 0
    while rounds <= 0 or done < rounds:
        if done:
            sleep(every)
        done += 1
        counts = []
        for pool in pools:
            try:
                counts.append(f"{pool} {len(provider.machines(pool))}")
            except MachinesError as error:
                counts.append(f"{pool} failed ({error})")
        budget = provider.budget()
        stated = f"budget {budget.remaining}/{budget.limit}" if budget.stated else "no budget"
        report(f"round {done}: {', '.join(counts)}; {stated}")
