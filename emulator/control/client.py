"""A small typed client for the emulator's control API (stdlib urllib only).

control = Control("http://127.0.0.1:8080/v1")   # the API URL or the emulator's root
control.set_stock([{"server_type": "cax11", "location": "fsn1"}])
control.set_faults([{"kind": "error", "method": "POST", "path": "/v1/servers", "times": 1}])
control.requests().routes["POST /v1/servers"]
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

API_SUFFIX = "/v1"


class ControlError(RuntimeError):
    """The control API refused a request (the message carries its error body)."""


@dataclass(frozen=True)
class RequestCounts:
    """API requests served since the last reset, per `METHOD /v1/path-template`."""

    total: int
    routes: dict[str, int]

    def get(self, route: str) -> int:
        """The count of one route, e.g. `GET /v1/servers/{id}` (0 if never requested)."""
        return self.routes.get(route, 0)


class Control:
    """Steers a running emulator: stock, rate limit, faults, counts, reset, bulk servers."""

    def __init__(self, base_url: str, timeout: float = 10.0) -> None:
        root = base_url.rstrip("/")
        if root.endswith(API_SUFFIX):
            root = root[: -len(API_SUFFIX)]
        self.root = root
        self.timeout = timeout

    def _call(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310 - the URL is the emulator's, http only
            f"{self.root}/_emulator/{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise ControlError(f"{method} {path}: {exc.code} {exc.read().decode()}") from None

    def health(self) -> bool:
        """Whether the emulator answers."""
        return bool(self._call("GET", "health").get("status") == "ok")

    def stock(self) -> list[dict[str, str]]:
        """The out-of-stock entries."""
        return list(self._call("GET", "stock")["out_of_stock"])

    def set_stock(self, out_of_stock: Sequence[Mapping[str, str]]) -> None:
        """Replace the out-of-stock entries: `{"server_type", "location", "code"?}` each."""
        self._call("PUT", "stock", [dict(entry) for entry in out_of_stock])

    def set_rate_limit(self, limit: int, per_second: float | None = None) -> None:
        """Set the token bucket (refill `limit/3600` per second by default); it starts full."""
        body: dict[str, Any] = {"limit": limit}
        if per_second is not None:
            body["per_second"] = per_second
        self._call("PUT", "rate_limit", body)

    def rate_limit(self) -> dict[str, Any]:
        """`{"limit", "per_second", "remaining", "reset"}`."""
        return dict(self._call("GET", "rate_limit"))

    def set_faults(self, rules: Sequence[Mapping[str, Any]]) -> None:
        """Replace the fault rules (see emulator/faults.py for their fields)."""
        self._call("PUT", "faults", [dict(rule) for rule in rules])

    def faults(self) -> list[dict[str, Any]]:
        """The fault rules, with the `times` each has left."""
        return list(self._call("GET", "faults")["faults"])

    def clear_faults(self) -> None:
        """Remove every fault rule."""
        self._call("DELETE", "faults")

    def set_action_failures(self, rules: Sequence[Mapping[str, Any]]) -> None:
        """Make the next actions of some commands fail: rules `{"command", "code"?,
        "message"?, "times"?}` (replaces them; `times` defaults to 1, null is always)."""
        self._call("PUT", "action_failures", [dict(rule) for rule in rules])

    def action_failures(self) -> list[dict[str, Any]]:
        """The action failure rules, with the `times` each has left."""
        return list(self._call("GET", "action_failures")["action_failures"])

    def clear_action_failures(self) -> None:
        """No more failing actions."""
        self._call("DELETE", "action_failures")

    def limits(self) -> dict[str, Any]:
        """The project's limits: `{"servers": N | None}`."""
        return dict(self._call("GET", "limits"))

    def set_limits(self, *, servers: int | None) -> None:
        """The project's server limit from now on (None: none); `reset` restores the
        start-up one."""
        self._call("PUT", "limits", {"servers": servers})

    def clock(self) -> float:
        """The project's time, seconds since the epoch (what `created` is written from)."""
        return float(self._call("GET", "clock")["now"])

    def set_clock(self, now: float | None) -> float:
        """Let the project's time be `now` from here on (None: real time again)."""
        return float(self._call("PUT", "clock", {"now": now})["now"])

    def requests(self) -> RequestCounts:
        """API requests served since the last reset."""
        raw = self._call("GET", "requests")
        return RequestCounts(int(raw["total"]), dict(raw["routes"]))

    def reset_requests(self) -> None:
        """Zero the request counts."""
        self._call("DELETE", "requests")

    def reset(self) -> None:
        """Drop all resources, actions, faults and counts; restore start-up stock and limits."""
        self._call("POST", "reset")

    def set_timing(self, boot_seconds: float, action_seconds: float | None = None) -> None:
        """How long booting and (power, delete) actions take from now on."""
        self._call(
            "PUT", "timing", {"boot_seconds": boot_seconds, "action_seconds": action_seconds}
        )

    def add_image(
        self,
        *,
        architecture: str = "x86",
        labels: Mapping[str, str] | None = None,
        description: str = "",
        created: str | None = None,
        disk_size: int = 40,
        kind: str = "snapshot",
        status: str = "available",
    ) -> int:
        """Seed a snapshot (or backup) without a server; its image id.

        `created` (RFC 3339) dates it, e.g. to make it older than another one; `status`
        `creating` holds it being made until `finish_image`.
        """
        body: dict[str, object] = {
            "architecture": architecture,
            "labels": dict(labels or {}),
            "description": description,
            "disk_size": disk_size,
            "type": kind,
            "status": status,
        }
        if created is not None:
            body["created"] = created
        raw = self._call("POST", "images", body)
        return int(raw["id"])

    def finish_image(self, image_id: int) -> None:
        """Make a snapshot seeded ``creating`` available."""
        self._call("PUT", f"images/{image_id}", {"status": "available"})

    def user_data(self, server_id: int) -> str:
        """The user data a server was created with (its metadata service's view)."""
        return str(self._call("GET", f"servers/{server_id}/user_data")["user_data"])

    def add_servers(
        self,
        count: int,
        *,
        name_prefix: str = "server-",
        server_type: str = "cx23",
        location: str = "fsn1",
        labels: Mapping[str, str] | None = None,
        image: str = "ubuntu-24.04",
    ) -> list[int]:
        """Insert `count` running servers named `{name_prefix}1..N` at once; their ids."""
        raw = self._call(
            "POST",
            "servers",
            {
                "count": count,
                "name_prefix": name_prefix,
                "server_type": server_type,
                "location": location,
                "labels": dict(labels or {}),
                "image": image,
            },
        )
        return [int(server_id) for server_id in raw["ids"]]
