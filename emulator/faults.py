"""Injected faults: errors, delays and dropped connections on chosen API requests.

A rule matches by method (None = any) and path: `path` is a prefix of the request path
(`/v1/servers` also matches `/v1/servers/42`), `path_regex` must match the whole path; with
neither, every API path matches. Kinds:

- `error`: answer `status` with a Hetzner error body (`code`, `message`, `details`);
- `delay`: wait `seconds`, or until the client has closed its connection, then go on (delays
  add up; another rule may still fire): a delay past the client's timeout ends when it gives
  up, so a long one costs the test only that timeout;
- `drop_before`: close the connection without processing the request;
- `drop_after`: process the request (e.g. create the server), then close without answering.

`times` limits how often a rule fires (None = forever); `probability` draws from an RNG
seeded by `--seed`, so runs are reproducible. `headers` are added to an `error` answer.
"""

from __future__ import annotations

import random
import re
import select
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, cast

FaultKind = Literal["error", "delay", "drop_before", "drop_after"]
KINDS: tuple[FaultKind, ...] = ("error", "delay", "drop_before", "drop_after")


def hold(connection: socket.socket, seconds: float) -> None:
    """Wait ``seconds``, or less when the client closes ``connection`` first (it gave up)."""
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0:
        readable, _, _ = select.select([connection], [], [], left)
        if not readable:
            return
        try:
            if not connection.recv(1, socket.MSG_PEEK):
                return
        except OSError:
            return
        time.sleep(left)  # the client sent more without waiting: hold the full time


class FaultRuleError(ValueError):
    """A fault rule is malformed."""


@dataclass
class FaultRule:
    """One fault rule; `times` counts down as it fires."""

    kind: FaultKind
    method: str | None = None
    path: str | None = None
    path_regex: str | None = None
    status: int = 503
    code: str = "unavailable"
    message: str = "injected fault"
    details: dict[str, Any] | None = None
    seconds: float = 0.0
    times: int | None = None
    probability: float = 1.0
    headers: dict[str, str] = field(default_factory=dict)

    def matches(self, method: str, path: str) -> bool:
        """Whether this rule applies to a request (ignoring times and probability)."""
        if self.method is not None and self.method.upper() != method.upper():
            return False
        if self.path is not None and not path.startswith(self.path):
            return False
        return self.path_regex is None or re.fullmatch(self.path_regex, path) is not None

    def to_json(self) -> dict[str, Any]:
        """The rule as the control API shows it (with the times left): its fields."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: object) -> FaultRule:
        """Read a rule from its JSON form, checking every field."""
        if not isinstance(raw, dict):
            raise FaultRuleError("a fault rule must be a JSON object")
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise FaultRuleError(f"unknown fault rule fields: {', '.join(sorted(unknown))}")
        kind = raw.get("kind")
        if kind not in KINDS:
            raise FaultRuleError(f"kind must be one of {', '.join(KINDS)}")
        rule = cls(
            kind=cast(FaultKind, kind),
            method=_opt_str(raw, "method"),
            path=_opt_str(raw, "path"),
            path_regex=_opt_str(raw, "path_regex"),
            status=_int(raw, "status", 503),
            code=_str(raw, "code", "unavailable"),
            message=_str(raw, "message", "injected fault"),
            details=_opt_dict(raw, "details"),
            seconds=_float(raw, "seconds", 0.0),
            times=_opt_int(raw, "times"),
            probability=_float(raw, "probability", 1.0),
            headers=_headers(raw),
        )
        rule.check()
        return rule

    def check(self) -> None:
        """Raise FaultRuleError if the values are out of range."""
        if self.path_regex is not None:
            try:
                re.compile(self.path_regex)
            except re.error as exc:
                raise FaultRuleError(f"path_regex does not compile: {exc}") from exc
        if not 100 <= self.status <= 599:
            raise FaultRuleError("status must be an HTTP status code")
        if self.seconds < 0 or not 0.0 <= self.probability <= 1.0:
            raise FaultRuleError("seconds must be >= 0 and probability within 0..1")
        if self.times is not None and self.times < 0:
            raise FaultRuleError("times must be >= 0 or null")


@dataclass(frozen=True)
class FaultPlan:
    """What to do to one request: sleep first, then maybe one terminal fault."""

    delay: float = 0.0
    terminal: FaultRule | None = None


class Faults:
    """The active fault rules and the seeded RNG that draws their probabilities."""

    def __init__(self, seed: int = 0, rules: list[FaultRule] | None = None) -> None:
        self._lock = threading.Lock()
        self._seed = seed
        self._rng = random.Random(seed)  # noqa: S311 - reproducible draws, not secrets
        self._rules: list[FaultRule] = list(rules or [])

    def replace(self, rules: list[FaultRule]) -> None:
        """Set the rules (in order of precedence) and restart the RNG from the seed."""
        with self._lock:
            self._rules = list(rules)
            self._rng = random.Random(self._seed)  # noqa: S311 - reproducible draws

    def clear(self) -> None:
        """Remove every rule."""
        self.replace([])

    def rules(self) -> list[FaultRule]:
        """Copies of the current rules."""
        with self._lock:
            return [FaultRule(**vars(rule)) for rule in self._rules]

    def plan(self, method: str, path: str) -> FaultPlan:
        """Decide the faults for one request, counting down the rules that fire."""
        with self._lock:
            delay = 0.0
            for rule in self._rules:
                if rule.times == 0 or not rule.matches(method, path):
                    continue
                if rule.probability < 1.0 and self._rng.random() >= rule.probability:
                    continue
                if rule.times is not None:
                    rule.times -= 1
                if rule.kind == "delay":
                    delay += rule.seconds
                else:
                    return FaultPlan(delay, rule)
            return FaultPlan(delay, None)


def _opt_str(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise FaultRuleError(f"{key} must be a string or null")
    return value


def _str(raw: dict[str, Any], key: str, default: str) -> str:
    value = _opt_str(raw, key)
    return default if value is None else value


def _opt_int(raw: dict[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise FaultRuleError(f"{key} must be an integer or null")
    return value


def _int(raw: dict[str, Any], key: str, default: int) -> int:
    value = _opt_int(raw, key)
    return default if value is None else value


def _float(raw: dict[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FaultRuleError(f"{key} must be a number")
    return float(value)


def _opt_dict(raw: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, dict):
        raise FaultRuleError(f"{key} must be an object or null")
    return value


def _headers(raw: dict[str, Any]) -> dict[str, str]:
    value = raw.get("headers") or {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise FaultRuleError("headers must be an object of strings")
    return dict(value)
