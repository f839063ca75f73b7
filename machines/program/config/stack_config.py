"""A stack's configuration as Pulumi hands it to a program, or decoded from a stack file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from machines.runtime.secrets import MASK

PROJECT = "orca-machines"
"""The Pulumi project, so the namespace of this program's configuration keys."""

SECRET_PLACEHOLDER = MASK
"""What stands for an encrypted value of a stack file, which is checked without decrypting it."""


@dataclass(frozen=True)
class StackConfig:
    """A stack's configuration as Pulumi hands it to a program.

    Keys are ``namespace:name``; values are strings, objects and lists JSON-encoded;
    ``secret_keys`` are the keys set with ``--secret``.
    """

    values: Mapping[str, str]
    secret_keys: frozenset[str] = frozenset()

    @classmethod
    def from_stack_file(cls, config: Mapping[str, object]) -> StackConfig:
        """From the ``config:`` mapping of a parsed ``Pulumi.<stack>.yaml``.

        Encrypted values (``{secure: ...}``) are not decrypted: ``SECRET_PLACEHOLDER`` stands
        for them and their key counts as secret, as Pulumi marks it.
        """
        values: dict[str, str] = {}
        secret_keys: set[str] = set()
        for key, value in config.items():
            plain, secret = _unwrap_secure(value)
            values[key] = _encode(plain)
            if secret:
                secret_keys.add(key)
        return cls(values, frozenset(secret_keys))


def decode(value: str) -> object:
    """An object or list when the value is one JSON-encoded, else the string itself."""
    if value[:1] in ("{", "["):
        try:
            decoded: object = json.loads(value)
        except json.JSONDecodeError:
            return value
        return decoded
    return value


def _unwrap_secure(value: object) -> tuple[object, bool]:
    if isinstance(value, Mapping):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        items = {k: _unwrap_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(s for _, s in items.values())
    if isinstance(value, list):
        unwrapped = [_unwrap_secure(v) for v in value]
        return [v for v, _ in unwrapped], any(s for _, s in unwrapped)
    return value, False


def _encode(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list):
        return json.dumps(value, default=str)
    return str(value)
