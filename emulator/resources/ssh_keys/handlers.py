"""SSH key endpoints: create, list (by name, fingerprint, label selector), get, update, delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.labels import validate_labels
from emulator.project import State
from emulator.render import timestamp
from emulator.resources.kind import Kind, query_equals
from emulator.resources.ssh_keys.state import SSHKey
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import required_str, resource_name

SSH_KEY_SORT_KEYS: dict[str, Callable[[SSHKey], Any]] = {
    "id": lambda k: k.id,
    "name": lambda k: k.name,
}


def ssh_key_json(key: SSHKey) -> Json:
    """An SSH key."""
    return {
        "id": key.id,
        "name": key.name,
        "fingerprint": key.fingerprint,
        "public_key": key.public_key,
        "labels": dict(key.labels),
        "created": timestamp(key.created),
    }


def create(state: State, request: Request) -> Response:
    """POST /ssh_keys: name, public_key, labels."""
    body = request.body
    name = resource_name(body)
    public_key = required_str(body, "public_key")
    labels = validate_labels(body.get("labels"))
    with state.transaction() as project:
        key = project.ssh_keys.create(name, public_key, labels)
        return Response(201, {"ssh_key": ssh_key_json(key)})


SSH_KEYS: Kind[SSHKey] = Kind(
    "ssh_keys",
    "ssh_key",
    render=lambda _, key: ssh_key_json(key),
    edits=lambda project: project.ssh_keys,
    sort_keys=SSH_KEY_SORT_KEYS,
    filters=query_equals("fingerprint", lambda key: key.fingerprint),
    create=create,
)

ROUTES: list[Endpoint[State]] = SSH_KEYS.routes()
