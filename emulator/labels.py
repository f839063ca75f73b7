"""Hetzner's label rules: which keys and values a resource may carry.

Keys are an optional DNS-subdomain prefix plus `/` plus a name of at most 63 characters;
values are at most 63 characters, alphanumeric at both ends with `-`, `_`, `.` inside, or
empty. The `hetzner.cloud/` prefix is reserved. Shared by label validation and selectors.
"""

from __future__ import annotations

import re

from emulator.errors import invalid_field

_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
_MAX_PREFIX = 253
RESERVED_PREFIX = "hetzner.cloud"


def is_valid_key(key: str, *, allow_reserved: bool = False) -> bool:
    """Whether `key` is a valid label key (optional prefix, then a name).

    The reserved `hetzner.cloud/` prefix may be selected on but not set.
    """
    prefix, slash, name = key.rpartition("/")
    if slash and not _is_dns_subdomain(prefix):
        return False
    if slash and prefix == RESERVED_PREFIX and not allow_reserved:
        return False
    return _NAME.fullmatch(name) is not None


def is_valid_value(value: str) -> bool:
    """Whether `value` is a valid label value (empty is allowed)."""
    return value == "" or _NAME.fullmatch(value) is not None


def _is_dns_subdomain(prefix: str) -> bool:
    if not prefix or len(prefix) > _MAX_PREFIX:
        return False
    return all(_DNS_LABEL.fullmatch(part) for part in prefix.split("."))


def validate_labels(raw: object, field: str = "labels") -> dict[str, str]:
    """Check a request's `labels` object and return it as a plain dict, or raise invalid_input."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise invalid_field(field, "must be an object of string keys and string values")
    labels: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise invalid_field(field, "keys and values must be strings")
        if not is_valid_key(key):
            raise invalid_field(field, f"label key '{key}' is invalid")
        if not is_valid_value(value):
            raise invalid_field(field, f"label value '{value}' of key '{key}' is invalid")
        labels[key] = value
    return labels
