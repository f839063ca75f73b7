"""The runtime's instruments and spans read back with the SDK's in-memory reader and exporter.

``recording()`` points ``machines.runtime.telemetry`` at a meter provider with an
``InMemoryMetricReader`` and a tracer provider with an ``InMemorySpanExporter``, and back at
the global (no-op) providers afterwards. ``Recorded`` answers in the terms a test asks:
the value of a counter for some attributes, the spans of a name, every attribute value seen.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from machines.runtime import telemetry


class Recorded:
    """What the runtime reported since ``recording()`` began."""

    def __init__(self, reader: InMemoryMetricReader, spans: InMemorySpanExporter) -> None:
        self._reader = reader
        self._spans = spans

    def points(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        """(attributes, data point) of every point of the instrument ``name`` now."""
        data = self._reader.get_metrics_data()
        found: list[tuple[dict[str, Any], Any]] = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found += [(dict(p.attributes or {}), p) for p in metric.data.data_points]
        return found

    def total(self, name: str, where: Mapping[str, Any] | None = None) -> float:
        """A counter's sum (a histogram's count) over the points whose attributes include
        ``where``."""
        total = 0.0
        for attrs, point in self.points(name):
            if _has(attrs, where or {}):
                total += point.count if hasattr(point, "count") else point.value
        return total

    def retried(self, operation: str) -> int:
        """The tries of ``operation`` (``GET /server_types``, ``DescribeImages``) that another
        try followed: what a cloud counts of one read is 1 plus these (a loaded machine may
        answer a try after its timeout, and the provider rightly asks again)."""
        return int(self.total("orca.machines.retries", {telemetry.OPERATION: operation}))

    def values(self, name: str, where: Mapping[str, Any] | None = None) -> list[float]:
        """A gauge's values at the points whose attributes include ``where``."""
        return [p.value for attrs, p in self.points(name) if _has(attrs, where or {})]

    def names(self) -> set[str]:
        """The instruments that have at least one point now."""
        data = self._reader.get_metrics_data()
        return {
            metric.name
            for resource in (data.resource_metrics if data else [])
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.data.data_points
        }

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """The finished spans (of ``name``), oldest first."""
        return [s for s in self._spans.get_finished_spans() if name is None or s.name == name]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """The finished spans whose parent is ``parent``."""
        assert parent.context is not None
        return [
            s
            for s in self._spans.get_finished_spans()
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]

    def metric_attribute_values(self) -> set[str]:
        """Every attribute value of every metric point, as text."""
        return {
            str(value)
            for name in self.names()
            for attrs, _ in self.points(name)
            for value in attrs.values()
        }

    def span_attribute_values(self) -> set[str]:
        """Every attribute value of every span and span event, as text."""
        found: set[str] = set()
        for span in self._spans.get_finished_spans():
            found |= {str(v) for v in (span.attributes or {}).values()}
            for event in span.events:
                found |= {str(v) for v in (event.attributes or {}).values()}
        return found


def _has(attrs: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(attrs.get(key) == value for key, value in wanted.items())


@contextmanager
def recording() -> Iterator[Recorded]:
    """The runtime reporting to in-memory readers for the block, to the global providers
    after it. Providers left over from earlier tests are collected first: the gauges report
    every live provider."""
    gc.collect()
    reader = InMemoryMetricReader()
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    meter_provider = MeterProvider(metric_readers=[reader])
    telemetry.use(meter_provider, tracer_provider)
    try:
        yield Recorded(reader, spans)
    finally:
        telemetry.use()
        meter_provider.shutdown()
        tracer_provider.shutdown()


def prometheus_name(instrument: telemetry.Instrument) -> str:
    """The name OpenTelemetry's Prometheus exporter gives ``instrument``'s series: dots as
    underscores, the unit ``s`` as ``_seconds``, ``_total`` for a counter (the scrape test
    holds this to what the exporter writes)."""
    name = instrument.name.replace(".", "_")
    if instrument.unit == "s":
        name += "_seconds"
    return name + ("_total" if instrument.kind == "counter" else "")
