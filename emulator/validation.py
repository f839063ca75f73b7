"""Reading request bodies: typed field getters that answer `invalid_input` like the real API."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from emulator.errors import invalid_field
from emulator.labels import validate_labels

_HOST_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_HOST_LABEL}(\.{_HOST_LABEL})*")
MAX_HOSTNAME = 253
MAX_NAME = 128
MAX_USER_DATA = 32 * 1024

Body = dict[str, Any]


def is_hostname(name: str) -> bool:
    """RFC 1123 host name: letters, digits, dashes and dots, labels of 1..63 characters."""
    return len(name) <= MAX_HOSTNAME and _HOSTNAME.fullmatch(name) is not None


def required_str(body: Body, key: str) -> str:
    """A required, non-empty string field."""
    value = body.get(key)
    if value is None:
        raise invalid_field(key, "is required")
    if not isinstance(value, str) or not value:
        raise invalid_field(key, "must be a non-empty string")
    return value


def optional_str(body: Body, key: str) -> str | None:
    """An optional string field."""
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid_field(key, "must be a string")
    return value


def optional_bool(body: Body, key: str, default: bool) -> bool:
    """An optional boolean field (null means the default)."""
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise invalid_field(key, "must be a boolean")
    return value


def optional_object(body: Body, key: str) -> Body:
    """An optional object field ({} when absent)."""
    value = body.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid_field(key, "must be an object")
    return value


def id_or_name(value: object, field: str) -> int | str:
    """An `ID or name` reference: an integer, a string of digits (an id) or a name."""
    if isinstance(value, bool) or not isinstance(value, int | str) or value == "":
        raise invalid_field(field, "must be an ID or a name")
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def required_ref(body: Body, key: str) -> int | str:
    """A required `ID or name` field."""
    if body.get(key) is None:
        raise invalid_field(key, "is required")
    return id_or_name(body[key], key)


def optional_ref(body: Body, key: str) -> int | str | None:
    """An optional `ID or name` field."""
    return None if body.get(key) is None else id_or_name(body[key], key)


def ref_list(body: Body, key: str) -> list[int | str]:
    """A list of `ID or name` references ([] when absent)."""
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid_field(key, "must be a list")
    return [id_or_name(item, key) for item in value]


def id_list(body: Body, key: str) -> list[int]:
    """A list of integer ids ([] when absent)."""
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(
        isinstance(item, int) and not isinstance(item, bool) for item in value
    ):
        raise invalid_field(key, "must be a list of IDs")
    return list(value)


def object_list(body: Body, key: str) -> list[Body]:
    """A list of objects ([] when absent)."""
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise invalid_field(key, "must be a list of objects")
    return list(value)


def resource_name(body: Body, key: str = "name") -> str:
    """A required name of an ssh key, firewall and the like: 1..128 characters."""
    name = required_str(body, key)
    if len(name) > MAX_NAME:
        raise invalid_field(key, "is too long")
    return name


def name_and_labels(
    body: Body, read_name: Callable[[Body], str] = resource_name
) -> tuple[str | None, dict[str, str] | None]:
    """What a PUT changes: the new name and/or labels (None where the body leaves one out)."""
    name = read_name(body) if body.get("name") is not None else None
    labels = validate_labels(body["labels"]) if body.get("labels") is not None else None
    return name, labels
