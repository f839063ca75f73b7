"""Command-line settings: where to listen, tokens, stock, rate limit, faults, timing."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field

from emulator.auth import TokenError, check_token
from emulator.capacity import OutOfStock, StockRuleError
from emulator.faults import FaultRule, FaultRuleError
from emulator.ratelimit import DEFAULT_LIMIT


@dataclass(frozen=True)
class Config:
    """Everything the emulator needs to start."""

    tokens: tuple[str, ...]
    host: str = "127.0.0.1"
    port: int = 8080
    out_of_stock: tuple[OutOfStock, ...] = ()
    rate_limit: int = DEFAULT_LIMIT
    per_second: float | None = None  # None: limit / 3600, i.e. the limit refills per hour
    faults: tuple[FaultRule, ...] = field(default=())
    seed: int = 0
    boot_seconds: float = 1.0
    action_seconds: float | None = None
    server_limit: int | None = None  # the project's server limit (None: none)
    quiet: bool = False

    def __post_init__(self) -> None:
        for token in self.tokens:
            check_token(token)

    @property
    def refill(self) -> float:
        """Tokens per second that the rate-limit bucket refills."""
        return self.per_second if self.per_second is not None else self.rate_limit / 3600


def _token(text: str) -> str:
    try:
        return check_token(text)
    except TokenError as exc:
        raise argparse.ArgumentTypeError(f"{exc}: give a token the real API could issue") from None


def _out_of_stock(text: str) -> OutOfStock:
    try:
        return OutOfStock.parse(text)
    except StockRuleError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _rate_limit(text: str) -> tuple[int, float | None]:
    limit, _, per_second = text.partition("/")
    try:
        parsed = int(limit), float(per_second) if per_second else None
    except ValueError:
        raise argparse.ArgumentTypeError("expected LIMIT[/PER_SECOND], e.g. 3600/1") from None
    if parsed[0] < 1 or (parsed[1] is not None and parsed[1] <= 0):
        raise argparse.ArgumentTypeError("LIMIT must be >= 1 and PER_SECOND > 0")
    return parsed


def _fault(text: str) -> FaultRule:
    try:
        return FaultRule.from_json(json.loads(text))
    except (ValueError, FaultRuleError) as exc:
        raise argparse.ArgumentTypeError(f"bad --fault: {exc}") from None


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError("a limit is a whole number >= 0")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("seconds must be >= 0")
    return value


def parser() -> argparse.ArgumentParser:
    """The CLI of `python -m emulator`."""
    p = argparse.ArgumentParser(
        prog="python -m emulator",
        description="Serve an emulated Hetzner Cloud API under /v1; print its base URL first.",
    )
    p.add_argument(
        "--token",
        action="append",
        type=_token,
        required=True,
        help="a valid API token, 64 letters and digits as Hetzner's (repeat for several; "
        "all share one project)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=8080, help="port (0 picks a free one)")
    p.add_argument(
        "--out-of-stock",
        action="append",
        type=_out_of_stock,
        default=[],
        metavar="TYPE@LOCATION[:code]",
        help="a server type a location cannot place (repeatable)",
    )
    p.add_argument(
        "--rate-limit",
        type=_rate_limit,
        default=(DEFAULT_LIMIT, None),
        metavar="LIMIT[/PER_SECOND]",
        help="token bucket size and refill per second (default refill LIMIT/3600)",
    )
    p.add_argument(
        "--fault",
        action="append",
        type=_fault,
        default=[],
        metavar="JSON",
        help="a fault rule as JSON (repeatable; see emulator/faults.py)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the fault and password RNG")
    p.add_argument(
        "--boot-seconds", type=_seconds, default=1.0, help="seconds a new server takes to boot"
    )
    p.add_argument(
        "--action-seconds",
        type=_seconds,
        default=None,
        help="seconds power and delete actions take (default: --boot-seconds)",
    )
    p.add_argument(
        "--server-limit",
        type=_limit,
        default=None,
        metavar="N",
        help="the project's server limit: a create past it is refused with "
        "resource_limit_exceeded (default: none)",
    )
    p.add_argument("--quiet", action="store_true", help="no per-request log lines")
    return p


def parse_args(argv: list[str] | None = None) -> Config:
    """Read the command line into a Config."""
    args = parser().parse_args(argv)
    limit, per_second = args.rate_limit
    return Config(
        tokens=tuple(args.token),
        host=args.host,
        port=args.port,
        out_of_stock=tuple(args.out_of_stock),
        rate_limit=limit,
        per_second=per_second,
        faults=tuple(args.fault),
        seed=args.seed,
        boot_seconds=args.boot_seconds,
        action_seconds=args.action_seconds,
        server_limit=args.server_limit,
        quiet=args.quiet,
    )
