"""What the runtime does, as OpenTelemetry metrics and spans, through the API alone.

Libraries instrument with ``opentelemetry-api`` and leave the SDK and the exporter to the
application: until it installs an SDK every instrument and span here is the API's no-op.
Only the cloud providers import this module (``import machines`` never loads OpenTelemetry).
It sits below the provider, which reports through it: what it reads of a provider is
``Observed``, never ``machines.runtime.provider``.

Every instrument is named in ``INSTRUMENTS`` (docs/metrics.md lists them). HTTP requests follow
the semantic conventions of HTTP client metrics and spans; the rest is under ``orca.machines``.
Attribute values are names, codes and counts, never a token or user data; metrics carry no
attribute of one machine (its name or id would make their cardinality unbounded), while spans
may name the machine.
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit

from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation

from machines.runtime.errors import ForeignMachineError
from machines.runtime.models import Created, Machine, MachineSpec

if TYPE_CHECKING:
    from datetime import datetime

    from machines.runtime.budget import Budget
    from machines.runtime.models import Market
    from machines.runtime.paid import Advice

SCOPE = "machines"
"""The instrumentation scope of every meter and tracer of the runtime."""

# Attribute names: the semantic conventions' where they have one, else ``orca.*``.
HTTP_METHOD = "http.request.method"
HTTP_STATUS = "http.response.status_code"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
URL_TEMPLATE = "url.template"
ERROR_TYPE = "error.type"
RPC_SYSTEM = "rpc.system"
RPC_SERVICE = "rpc.service"
RPC_METHOD = "rpc.method"
PROVIDER = "orca.provider"
OWNER = "orca.owner"
POOL = "orca.pool"
MACHINE_TYPE = "orca.machine_type"
LOCATION = "orca.location"
MARKET = "orca.market"
OPERATION = "orca.operation"
OUTCOME = "orca.outcome"
CALL = "orca.call"
MACHINE_ID = "orca.machine.id"
MACHINE_NAME = "orca.machine.name"
MACHINES_FOUND = "orca.machines.found"
REASON = "orca.reason"
NOTICE = "orca.notice"

OK = "ok"
REFUSED = "refused"
THROTTLED = "throttled"
SERVER_ERROR = "5xx"
LOST_ANSWER = "lost_answer"
NOT_THE_API = "not_the_api"
BUSY = "busy"
OUTCOMES = (OK, REFUSED, THROTTLED, SERVER_ERROR, LOST_ANSWER, NOT_THE_API, BUSY)
"""What one try of a cloud request came to (``orca.outcome`` of ``orca.machines.requests``):
answered; refused for good (an error the API means, e.g. not found or no stock); throttled;
a 5xx; no answer (a timeout, a broken connection); an answer that is not the API's; busy
(locked, conflict, a request still in progress). Each cloud's ``answers.outcome`` decides."""

HTTP_DURATION_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0
)  # fmt: skip
"""The semantic conventions' advised buckets of ``http.client.request.duration``."""

CALL_DURATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Buckets of ``orca.machines.call.duration``: a call may retry up to ``ORCA_CALL_TIMEOUT``."""


@dataclass(frozen=True)
class Instrument:
    """One instrument as docs/metrics.md lists it."""

    name: str
    kind: str
    unit: str
    description: str
    attributes: tuple[str, ...]


INSTRUMENTS = (
    Instrument(
        "http.client.request.duration",
        "histogram",
        "s",
        "Each HTTP request to a cloud API, by the semantic conventions of HTTP clients",
        (
            HTTP_METHOD,
            SERVER_ADDRESS,
            SERVER_PORT,
            HTTP_STATUS,
            ERROR_TYPE,
            URL_TEMPLATE,
            PROVIDER,
            OPERATION,
        ),
    ),
    Instrument(
        "orca.machines.requests",
        "counter",
        "{request}",
        "Tries of cloud API requests, by operation and what each came to",
        (PROVIDER, OPERATION, OUTCOME),
    ),
    Instrument(
        "orca.machines.retries",
        "counter",
        "{retry}",
        "Tries that were tried again, by operation and what the failed try came to",
        (PROVIDER, OPERATION, OUTCOME),
    ),
    Instrument(
        "orca.machines.creates",
        "counter",
        "{create}",
        "create calls by what they answered: ok, no_stock or failed",
        (PROVIDER, POOL, MACHINE_TYPE, LOCATION, OUTCOME),
    ),
    Instrument(
        "orca.machines.deletes",
        "counter",
        "{delete}",
        "delete calls by outcome: ok, refused (not this owner's pool machine) or failed",
        (PROVIDER, OUTCOME),
    ),
    Instrument(
        "orca.machines.call.duration",
        "histogram",
        "s",
        "create, delete and machines calls, with all their requests and retries",
        (PROVIDER, CALL, OUTCOME),
    ),
    Instrument(
        "orca.machines.budget.limit",
        "gauge",
        "{request}",
        "The request budget as the cloud's last answer stated it (RateLimit-Limit)",
        (PROVIDER, OWNER),
    ),
    Instrument(
        "orca.machines.budget.remaining",
        "gauge",
        "{request}",
        "Requests left of the budget as the cloud's last answer stated it",
        (PROVIDER, OWNER),
    ),
    Instrument(
        "orca.machines.listing.window",
        "gauge",
        "s",
        "How long a listing of the owner's machines stays fresh now (+Inf: until the budget"
        " refills)",
        (PROVIDER, OWNER),
    ),
    Instrument(
        "orca.machines.listing.age",
        "gauge",
        "s",
        "Seconds since the current listing of the owner's machines began",
        (PROVIDER, OWNER),
    ),
    Instrument(
        "orca.machines.stock.short",
        "gauge",
        "s",
        "Per type and location remembered as out of stock, the seconds until it is tried again",
        (PROVIDER, OWNER, MACHINE_TYPE, LOCATION),
    ),
    Instrument(
        "orca.machines.paid.unused",
        "counter",
        "s",
        "Paid time thrown away: at each delete, the seconds the cloud still bills the machine"
        " for (Hetzner: the rest of its started hour; EC2: none after its first minute)",
        (PROVIDER, POOL),
    ),
    Instrument(
        "orca.machines.idle.kept",
        "gauge",
        "{machine}",
        "Idle machines the last keep_advice said to keep on time already paid, until their"
        " release_at",
        (PROVIDER, OWNER, POOL),
    ),
    Instrument(
        "orca.machines.idle.paid",
        "gauge",
        "s",
        "The paid time left (until release_at) of those kept idle machines, in all",
        (PROVIDER, OWNER, POOL),
    ),
    Instrument(
        "orca.machines.notices",
        "counter",
        "{notice}",
        "Notices the cloud gave that a running machine will go, counted once each as they are"
        " read, by kind: interrupting, rebalance or scheduled",
        (PROVIDER, OWNER, POOL, NOTICE),
    ),
)

Method = TypeVar("Method", bound=Callable[..., Any])


class Observed(Protocol):
    """What this module reads of a provider (``machines.runtime.provider.Provider``): its
    kind and owner (its calls' attributes), and for the gauges its budget, listing and
    stock memory, which ask the cloud nothing. The provider calls this module, so this
    module names what it reads instead of importing the provider."""

    @property
    def kind(self) -> str: ...

    @property
    def owner(self) -> str: ...

    def budget(self) -> Budget: ...

    def listing_age(self) -> float | None: ...

    def out_of_stock(self) -> list[tuple[str, str, Market, float]]: ...


class _Instruments:
    """The instruments of one meter provider, and the tracer of one tracer provider."""

    def __init__(
        self,
        meter_provider: metrics.MeterProvider | None,
        tracer_provider: trace.TracerProvider | None,
    ) -> None:
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        by_name = {i.name: i for i in INSTRUMENTS}

        def about(name: str) -> dict[str, str]:
            return {
                "name": name,
                "unit": by_name[name].unit,
                "description": by_name[name].description,
            }

        self.http_duration = meter.create_histogram(
            **about("http.client.request.duration"),
            explicit_bucket_boundaries_advisory=list(HTTP_DURATION_BUCKETS),
        )
        self.requests = meter.create_counter(**about("orca.machines.requests"))
        self.retries = meter.create_counter(**about("orca.machines.retries"))
        self.creates = meter.create_counter(**about("orca.machines.creates"))
        self.deletes = meter.create_counter(**about("orca.machines.deletes"))
        self.call_duration = meter.create_histogram(
            **about("orca.machines.call.duration"),
            explicit_bucket_boundaries_advisory=list(CALL_DURATION_BUCKETS),
        )
        meter.create_observable_gauge(
            callbacks=[_observe_budget("limit")], **about("orca.machines.budget.limit")
        )
        meter.create_observable_gauge(
            callbacks=[_observe_budget("remaining")], **about("orca.machines.budget.remaining")
        )
        meter.create_observable_gauge(
            callbacks=[_observe_window], **about("orca.machines.listing.window")
        )
        meter.create_observable_gauge(
            callbacks=[_observe_age], **about("orca.machines.listing.age")
        )
        meter.create_observable_gauge(
            callbacks=[_observe_stock], **about("orca.machines.stock.short")
        )
        self.paid_unused = meter.create_counter(**about("orca.machines.paid.unused"))
        meter.create_observable_gauge(
            callbacks=[_observe_kept("count")], **about("orca.machines.idle.kept")
        )
        meter.create_observable_gauge(
            callbacks=[_observe_kept("seconds")], **about("orca.machines.idle.paid")
        )
        self.notices = meter.create_counter(**about("orca.machines.notices"))


_lock = threading.Lock()
_current: _Instruments | None = None
_global: _Instruments | None = None


def use(
    meter_provider: metrics.MeterProvider | None = None,
    tracer_provider: trace.TracerProvider | None = None,
) -> None:
    """Report to these providers from now on; with none, to the global ones (the default).

    An application that sets the global providers needs nothing of this: instruments made
    before an SDK is installed follow it once it is. Tests pass their own providers.
    """
    global _current  # noqa: PLW0603 (the one switch of the process's instruments)
    if meter_provider is None and tracer_provider is None:
        _current = _global_instruments()
        return
    with _lock:
        _current = _Instruments(meter_provider, tracer_provider)


def _global_instruments() -> _Instruments:
    """The instruments on the global providers, made once: their gauges' callbacks are
    registered once however often ``use()`` switches back to them."""
    global _global  # noqa: PLW0603
    with _lock:
        if _global is None:
            _global = _Instruments(None, None)
        return _global


def _instruments() -> _Instruments:
    made = _current
    if made is None:
        use()
        made = _current
        assert made is not None
    return made


def tracer() -> trace.Tracer:
    """The runtime's tracer now (automation's spans come from it too)."""
    return _instruments().tracer


# Providers whose state the gauges report: budget, listing and stock memory.


_watched: weakref.WeakSet[Observed] = weakref.WeakSet()
_watched_lock = threading.Lock()


def watch(provider: Observed) -> None:
    """Report ``provider``'s budget, listing and stock memory while it lives (the gauges
    read ``budget``, ``listing_age`` and ``out_of_stock``, which make no request)."""
    with _watched_lock:
        _watched.add(provider)


def _each_watched() -> list[tuple[dict[str, str], Observed]]:
    with _watched_lock:
        found = list(_watched)
    return [({PROVIDER: p.kind, OWNER: p.owner}, p) for p in found]


def _observe_budget(field: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
    def observe(options: CallbackOptions) -> Iterable[Observation]:
        for attributes, watched in _each_watched():
            value = getattr(watched.budget(), field)
            if value is not None:
                yield Observation(value, attributes)

    return observe


def _observe_window(options: CallbackOptions) -> Iterable[Observation]:
    for attributes, watched in _each_watched():
        yield Observation(watched.budget().list_window, attributes)


def _observe_age(options: CallbackOptions) -> Iterable[Observation]:
    for attributes, watched in _each_watched():
        age = watched.listing_age()
        if age is not None:
            yield Observation(max(0.0, age), attributes)


def _observe_stock(options: CallbackOptions) -> Iterable[Observation]:
    for attributes, watched in _each_watched():
        for machine_type, location, market, seconds in watched.out_of_stock():
            where = {MACHINE_TYPE: machine_type, LOCATION: location, MARKET: market.value}
            yield Observation(seconds, {**attributes, **where})


# Paid time: what keep_advice kept, what a delete threw away


@dataclass
class _Kept:
    """The idle machines a provider's advice said to keep: id -> (pool, release_at)."""

    now: Callable[[], datetime]
    machines: dict[str, tuple[str, datetime]]


_kept: weakref.WeakKeyDictionary[Observed, _Kept] = weakref.WeakKeyDictionary()
_kept_lock = threading.Lock()


def advised(provider: Observed, advice: Iterable[Advice], now: Callable[[], datetime]) -> None:
    """Remember which idle machines ``advice`` keeps and until when (the gauges read it;
    a machine advised again is replaced, one let go or deleted is dropped)."""
    with _kept_lock:
        kept = _kept.setdefault(provider, _Kept(now, {}))
        for a in advice:
            if a.release:
                kept.machines.pop(a.machine.id, None)
            else:
                kept.machines[a.machine.id] = (a.machine.pool, a.release_at)


def noticed(provider: str, owner: str, pool: str, kind: str) -> None:
    """The cloud gave a notice of ``kind`` (``Ending``'s value) that a running machine of
    ``pool`` will go: counted once, when it is first read."""
    _instruments().notices.add(1, {PROVIDER: provider, OWNER: owner, POOL: pool, NOTICE: kind})


def paid_unused(provider: Observed, machine: Machine, seconds: float) -> None:
    """A delete of ``machine`` that threw ``seconds`` of paid time away (0 counts too)."""
    with _kept_lock:
        kept = _kept.get(provider)
        if kept is not None:
            kept.machines.pop(machine.id, None)
    _instruments().paid_unused.add(seconds, {PROVIDER: provider.kind, POOL: machine.pool})


def _observe_kept(field: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
    def observe(options: CallbackOptions) -> Iterable[Observation]:
        # one point per provider kind, owner and pool: providers of one owner in one process
        # may advise on the same machine, which counts once
        left: dict[tuple[str, str, str], dict[str, float]] = {}
        for attributes, watched in _each_watched():
            with _kept_lock:
                kept = _kept.get(watched)
                if kept is None:
                    continue
                now = kept.now()
                for machine_id, (pool, at) in kept.machines.items():
                    seconds = (at - now).total_seconds()
                    if seconds > 0:
                        key = (attributes[PROVIDER], attributes[OWNER], pool)
                        left.setdefault(key, {})[machine_id] = seconds
        for (kind, owner, pool), each in sorted(left.items()):
            value = len(each) if field == "count" else sum(each.values())
            yield Observation(value, {PROVIDER: kind, OWNER: owner, POOL: pool})

    return observe


# HTTP requests and the tries of a call


class HttpRequest:
    """One HTTP request under way: its span, and the attributes its duration gets."""

    def __init__(self, span: trace.Span, attributes: dict[str, str | int]) -> None:
        self.span = span
        self.attributes = attributes

    def answered(self, status: int) -> None:
        """The request got an answer with HTTP ``status``."""
        self.attributes[HTTP_STATUS] = status
        self.span.set_attribute(HTTP_STATUS, status)
        if status >= 400:
            self.attributes[ERROR_TYPE] = str(status)
            self.span.set_attribute(ERROR_TYPE, str(status))
            self.span.set_status(trace.StatusCode.ERROR)


@contextmanager
def http_request(
    provider: str,
    method: str,
    url: str,
    operation: str,
    *,
    span_name: str,
    url_template: str | None = None,
    rpc: Mapping[str, str] | None = None,
) -> Iterator[HttpRequest]:
    """Time one HTTP request to a cloud API and give it a client span (the semantic
    conventions' attributes; ``url`` is reduced to its host and port, never its query).
    ``operation`` is bounded (a path template, an action); ``rpc``: the ``rpc.*`` attributes
    of an AWS API request, on the span.

    An exception leaving the block is the request's ``error.type`` (``error_type``).
    """
    parts = urlsplit(url)
    default_port = 443 if parts.scheme == "https" else 80
    attributes: dict[str, str | int] = {
        HTTP_METHOD: method,
        SERVER_ADDRESS: parts.hostname or "",
        SERVER_PORT: parts.port or default_port,
        PROVIDER: provider,
        OPERATION: operation,
    }
    if url_template is not None:
        attributes[URL_TEMPLATE] = url_template
    instruments = _instruments()
    started = time.perf_counter()
    with instruments.tracer.start_as_current_span(
        span_name,
        kind=trace.SpanKind.CLIENT,
        attributes={**attributes, **(rpc or {})},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        request = HttpRequest(span, attributes)
        try:
            yield request
        except Exception as error:
            kind = error_type(error)
            attributes[ERROR_TYPE] = kind
            span.set_attribute(ERROR_TYPE, kind)
            span.set_status(trace.StatusCode.ERROR, kind)
            raise
        finally:
            instruments.http_duration.record(time.perf_counter() - started, attributes)


def error_type(error: BaseException) -> str:
    """``error.type`` of an exception: its fully qualified class name, as the semantic
    conventions ask (``requests.exceptions.ConnectionError``)."""
    kind = type(error)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def tried(provider: str, operation: str, outcome: str, retried: bool) -> None:
    """One try of an API request came to ``outcome`` (one of ``OUTCOMES``); ``retried``:
    another try follows."""
    attributes = {PROVIDER: provider, OPERATION: operation, OUTCOME: outcome}
    instruments = _instruments()
    instruments.requests.add(1, attributes)
    if retried:
        instruments.retries.add(1, attributes)


# The provider's calls: create, delete, machines


class _Call:
    """A call under way: its span, and its outcome once known (else ok, or error when it
    raised)."""

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self.outcome: str | None = None


def traced_create(method: Method) -> Method:
    """``Provider.create`` in a span, its outcome counted by pool, type and location."""

    @functools.wraps(method)
    def create(self: Observed, spec: MachineSpec) -> Created:
        return _create_call(self, spec, lambda: method(self, spec))

    return create  # type: ignore[return-value]


def answered_create(provider: Observed, spec: MachineSpec, created: Created) -> Created:
    """A create ``provider`` answered ``created`` without any cloud's create call (a spanning
    provider's refusal before any cloud is asked, a pool at its max): its span and count,
    as ``traced_create`` gives every create."""
    return _create_call(provider, spec, lambda: created)


def _create_call(provider: Observed, spec: MachineSpec, answer: Callable[[], Created]) -> Created:
    """``answer()`` in a create's span, its outcome counted by pool, type and location."""
    attributes = {
        PROVIDER: provider.kind,
        POOL: spec.pool,
        MACHINE_TYPE: spec.machine_type,
        LOCATION: spec.location,
    }
    with _call(provider, "create", {**attributes, MACHINE_NAME: spec.name}) as call:
        try:
            created = answer()
        except BaseException:
            _instruments().creates.add(1, {**attributes, OUTCOME: "failed"})
            raise
        call.outcome = "ok" if created.ok else "no_stock" if created.no_stock else "failed"
        if created.machine is not None:
            call.span.set_attribute(MACHINE_ID, created.machine.id)
        if not created.ok:
            call.span.set_attribute(REASON, created.reason)
        _instruments().creates.add(1, {**attributes, OUTCOME: call.outcome})
        return created


def traced_delete(method: Method) -> Method:
    """``Provider.delete`` in a span, counted by outcome."""

    @functools.wraps(method)
    def delete(self: Observed, machine_id: str) -> bool:
        with _call(self, "delete", {PROVIDER: self.kind, MACHINE_ID: str(machine_id)}) as call:
            call.outcome = "failed"
            try:
                deleted: bool = method(self, machine_id)
                call.outcome = "ok"
                return deleted
            except ForeignMachineError:
                call.outcome = "refused"
                raise
            finally:
                _instruments().deletes.add(1, {PROVIDER: self.kind, OUTCOME: call.outcome})

    return delete  # type: ignore[return-value]


def traced_machines(method: Method) -> Method:
    """``Provider.machines`` in a span that says how many machines it found."""

    @functools.wraps(method)
    def machines(self: Observed, pool: str) -> list[Machine]:
        with _call(self, "machines", {PROVIDER: self.kind, POOL: str(pool)}) as call:
            found: list[Machine] = method(self, pool)
            call.span.set_attribute(MACHINES_FOUND, len(found))
            return found

    return machines  # type: ignore[return-value]


@contextmanager
def _call(provider: Observed, name: str, attributes: Mapping[str, str]) -> Iterator[_Call]:
    """A span ``Provider.<name>`` and the call's duration by outcome."""
    instruments = _instruments()
    started = time.perf_counter()
    with instruments.tracer.start_as_current_span(
        f"Provider.{name}", attributes={**attributes, OWNER: provider.owner}
    ) as span:
        call = _Call(span)
        raised = True
        try:
            yield call
            raised = False
        finally:
            outcome = call.outcome or ("error" if raised else "ok")
            span.set_attribute(OUTCOME, outcome)
            if outcome not in {"ok", "no_stock"}:
                span.set_status(trace.StatusCode.ERROR)
            instruments.call_duration.record(
                time.perf_counter() - started,
                {PROVIDER: provider.kind, CALL: name, OUTCOME: outcome},
            )
