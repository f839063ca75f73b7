"""Hetzner's answers in the package's terms: statuses, machines, and errors to retry or report."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Mapping

import requests
from hcloud import APIException
from hcloud.servers import BoundServer

from machines.runtime.clouds.hetzner.settings import (
    HCLOUD_ENDPOINT,
    HCLOUD_TOKEN,
    NO_STOCK_CODES,  # noqa: F401 (its old home)
)
from machines.runtime.errors import (
    CONNECTION,
    NOT_THE_API,
    TIMEOUT,
    CloudError,
    InvalidMachineIdError,
)
from machines.runtime.labels import POOL_LABEL, managed_by
from machines.runtime.models import Ending, Machine, Status, machine_address
from machines.runtime.telemetry import BUSY, LOST_ANSWER, OK, REFUSED, SERVER_ERROR, THROTTLED
from machines.runtime.telemetry import NOT_THE_API as NOT_API

RETRY_CODES = frozenset(
    {
        "rate_limit_exceeded",
        "locked",
        "conflict",
        "service_error",
        "maintenance",
        "timeout",
        "bad_gateway",
    }
)
"""Hetzner error codes worth another try: the same request may pass in a moment."""

STATUSES: Mapping[str, Status] = {
    "initializing": Status.STARTING,
    "starting": Status.STARTING,
    "rebuilding": Status.STARTING,
    "running": Status.RUNNING,
    "migrating": Status.RUNNING,
    "stopping": Status.STOPPING,
    "off": Status.OFF,
    "deleting": Status.DELETING,
    "unknown": Status.UNKNOWN,
}
"""Hetzner's server statuses in the shared vocabulary. A migrating server keeps running and
a rebuilding one boots again; anything Hetzner adds later is ``unknown`` until mapped."""


class NotTheApi(ValueError):
    """An answer that is not of the shape the Hetzner API gives (an empty body, ``{}``)."""


ANSWER_ERRORS = (NotTheApi, KeyError, TypeError, AttributeError)
"""What reading an answer of the wrong shape raises, in hcloud-python (``response["server"]``
of ``{}``) or here: the call's answer was not the API's."""


_SERVER_ID = re.compile(r"[1-9][0-9]{0,18}")
_LARGEST_ID = 2**63 - 1


def server_id_of(machine_id: object) -> int:
    """The server number of a machine id: ASCII digits of a positive 64-bit number, else
    ``InvalidMachineIdError`` (``"²"``, ``"٤٧"``, ``"007"``, ``123`` never reach the API)."""
    if isinstance(machine_id, str) and _SERVER_ID.fullmatch(machine_id):
        number = int(machine_id)
        if number <= _LARGEST_ID:
            return number
    raise InvalidMachineIdError(
        f"{machine_id!r} is not a Hetzner server id: expected a number such as 4711"
    )


def status_of(hetzner_status: str | None) -> Status:
    """The shared status for a Hetzner server status."""
    return STATUSES.get(hetzner_status or "", Status.UNKNOWN)


def machine(server: BoundServer, pool: str | None = None) -> Machine:
    """The shared ``Machine`` of a server; ``pool`` when its labels lack one."""
    if not isinstance(server.id, int) or not isinstance(server.name, str):
        raise NotTheApi("a server without an id or a name")
    labels = server.labels or {}
    location = server.location
    status = status_of(server.status)
    return Machine(
        id=str(server.id),
        name=server.name or "",
        status=status,
        machine_type=(server.server_type.name if server.server_type else "") or "",
        location=(location.name if location else "") or "",
        address=_address(server),
        pool=labels.get(POOL_LABEL, pool or ""),
        managed_by=managed_by(labels),
        ending=Ending.DELETED if status == Status.DELETING else Ending.NONE,
        created=server.created,
    )


def maybe_carried_out(error: Exception | None) -> bool:
    """Whether a try that raised ``error`` may have been carried out by the API although its
    answer was lost: the request went out (a read timeout, a connection broken after it was
    sent), not a connection that was refused or never made (which sends nothing)."""
    if isinstance(error, requests.ConnectTimeout):
        return False
    if isinstance(error, requests.ConnectionError):
        reason = getattr(error.args[0], "reason", None) if error.args else None
        cause = getattr(reason, "__cause__", None) or getattr(reason, "__context__", None)
        return not isinstance(cause, ConnectionRefusedError | socket.gaierror)
    return isinstance(error, requests.Timeout)


def retry_after(error: Exception, rate_limit_reset: str | None, status: int) -> float | None:
    """None when ``error`` is final, else the seconds Hetzner asked to wait (0: no opinion).

    ``status`` is the HTTP status of the answer that carried ``error``: any 5xx is tried
    again, whatever error code (``unavailable``, ``server_error``, none) came with it.
    """
    if isinstance(error, requests.ConnectionError | requests.Timeout):
        return 0.0
    if not isinstance(error, APIException):
        return None
    code = error.code
    if code in {"rate_limit_exceeded", 429}:
        return _seconds_until(rate_limit_reset)
    if isinstance(code, int):
        status = code
    return 0.0 if code in RETRY_CODES or status >= 500 else None


def outcome(error: Exception | None, status: int) -> str:  # noqa: PLR0911 (one per kind)
    """What one try came to, for ``machines.runtime.telemetry``: ``status`` is the HTTP status of
    the answer that carried ``error``."""
    if error is None:
        return OK
    if isinstance(error, requests.ConnectionError | requests.Timeout):
        return LOST_ANSWER
    if isinstance(error, ANSWER_ERRORS):
        return NOT_API
    if not isinstance(error, APIException):
        return REFUSED
    code = error.code
    if code in {"rate_limit_exceeded", 429}:
        return THROTTLED
    if isinstance(code, int):
        return SERVER_ERROR if code >= 500 else NOT_API
    if status >= 500:
        return SERVER_ERROR
    return BUSY if code in RETRY_CODES else REFUSED


def cloud_error(what: str, error: Exception, attempts: int, endpoint: str = "") -> CloudError:
    """The package's error for what hcloud or requests raised: Hetzner's code and a hint.

    An answer that is not the API's (HTML, an empty body, ``{}``) names ``endpoint``.
    """
    at = f" ({endpoint})" if endpoint else ""
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    if isinstance(error, APIException) and isinstance(error.code, int):
        return CloudError(
            f"{what}: the endpoint{at} answered HTTP {error.code} without a Hetzner API error"
            f"{tries}:"
            f" check that {HCLOUD_ENDPOINT} is the API's base URL (ending in /v1)",
            str(error.code) if error.code >= 500 else NOT_THE_API,
        )
    if isinstance(error, ANSWER_ERRORS):
        return CloudError(
            f"{what}: the endpoint{at} answered something that is not the Hetzner API's answer"
            f" ({type(error).__name__}){tries}: check that {HCLOUD_ENDPOINT} is the API's base"
            " URL (ending in /v1)",
            NOT_THE_API,
        )
    if isinstance(error, APIException):
        code = str(error.code)
        hint = {
            "unauthorized": f": check {HCLOUD_TOKEN}",
            "forbidden": ": the token may be read-only",
            "rate_limit_exceeded": ": the project's rate limit is spent, slow down",
        }.get(code, "")
        return CloudError(f"{what}: Hetzner answered {code}: {error.message}{tries}{hint}", code)
    if isinstance(error, requests.Timeout):
        return CloudError(f"{what}: Hetzner did not answer in time{tries}", TIMEOUT)
    if isinstance(error, requests.ConnectionError):
        return CloudError(
            f"{what}: could not reach the Hetzner API{tries}: check {HCLOUD_ENDPOINT}", CONNECTION
        )
    return CloudError(f"{what}: {type(error).__name__}{tries}", "error")


def _seconds_until(reset: str | None) -> float:
    try:
        return max(0.0, float(reset or 0) - time.time())
    except ValueError:
        return 0.0


def _address(server: BoundServer) -> str:
    """The public IPv4, else the public IPv6 network, else the first private network's
    address (a server with neither public address is reached through its network)."""
    net = server.public_net
    private = server.private_net or []
    return machine_address(
        net.ipv4.ip if net is not None and net.ipv4 is not None else None,
        net.ipv6.ip if net is not None and net.ipv6 is not None else None,
        private[0].ip if private else None,
    )
