"""Hetzner-style API errors: one exception type carrying the HTTP status and the error body.

Handlers raise `ApiError`; the HTTP layer turns it into `{"error": {"code", "message",
"details"}}` with the status the real API uses for that code (docs.hetzner.cloud, "Errors").
"""

from __future__ import annotations

from typing import Any

# HTTP status per error code, as listed in the real API's error table.
STATUS_BY_CODE: dict[str, int] = {
    "json_error": 400,
    "unauthorized": 401,
    "token_readonly": 401,
    "forbidden": 403,
    "maintenance": 403,
    "resource_limit_exceeded": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "uniqueness_error": 409,
    "conflict": 409,
    "deprecated_api_endpoint": 410,
    "resource_unavailable": 412,
    "primary_ip_version_mismatch": 412,
    "invalid_input": 422,
    "service_error": 422,
    "unsupported_error": 422,
    "placement_error": 422,
    "no_space_left_in_location": 422,
    "primary_ip_assigned": 422,
    "primary_ip_datacenter_mismatch": 422,
    "resource_in_use": 422,
    "firewall_already_applied": 422,
    "firewall_already_removed": 422,
    "firewall_resource_not_found": 422,
    "invalid_server_type": 422,
    "server_not_stopped": 422,
    "placement_group_member_limit_reached": 422,
    "locked": 423,
    "protected": 423,
    "rate_limit_exceeded": 429,
    "server_error": 500,
    "unavailable": 503,
    "timeout": 504,
}


class ApiError(Exception):
    """An error answered to the client as a Hetzner error body."""

    def __init__(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details
        self.status = status if status is not None else STATUS_BY_CODE.get(code, 422)

    def body(self) -> dict[str, Any]:
        """The JSON body the real API sends for this error."""
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


def invalid_field(field: str, problem: str) -> ApiError:
    """`invalid_input` naming one field, shaped like the real API's field errors."""
    return ApiError(
        "invalid_input",
        f"invalid input in field '{field}': {problem}",
        {"fields": [{"name": field, "messages": [problem]}]},
    )


def invalid_input(message: str) -> ApiError:
    """`invalid_input` without field details (e.g. 'image not found')."""
    return ApiError("invalid_input", message, {})


def not_found(resource: str, resource_id: object) -> ApiError:
    """`not_found` for a resource looked up by id in the path."""
    return ApiError("not_found", f"{resource} with ID '{resource_id}' not found", {})


def uniqueness(field: str, message: str) -> ApiError:
    """`uniqueness_error` naming the field that must be unique."""
    return ApiError("uniqueness_error", message, {"fields": [{"name": field}]})


def service_error() -> ApiError:
    """The catch-all answer for an unexpected failure: never a stack trace in a body."""
    return ApiError("service_error", "internal error in the emulator", None, status=500)
