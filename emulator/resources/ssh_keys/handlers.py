"""SSH key endpoints: create, list (by name, fingerprint, label selector), get, update, delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import State
from emulator.render import timestamp
from emulator.resources.ssh_keys.state import SSHKey
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import name_and_labels, required_str, resource_name

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


def list_keys(state: State, request: Request) -> Response:
    """GET /ssh_keys with name, fingerprint, label_selector, sort and pagination."""
    selector = selector_from(request)
    name = request.first("name")
    fingerprint = request.first("fingerprint")
    with state.transaction() as project:
        chosen = [
            k
            for k in project.ssh_keys.by_id.values()
            if (name is None or k.name == name)
            and (fingerprint is None or k.fingerprint == fingerprint)
            and selector.matches(k.labels)
        ]
        ordered = sort_items(chosen, request.every("sort"), SSH_KEY_SORT_KEYS)
        return page_response("ssh_keys", ordered, request, ssh_key_json)


def get_key(state: State, request: Request) -> Response:
    """GET /ssh_keys/{id}."""
    key_id = request.path_id(resource="ssh_key")
    with state.transaction() as project:
        return Response(200, {"ssh_key": ssh_key_json(project.ssh_keys.get(key_id))})


def update(state: State, request: Request) -> Response:
    """PUT /ssh_keys/{id}: name and/or labels."""
    key_id = request.path_id(resource="ssh_key")
    name, labels = name_and_labels(request.body)
    with state.transaction() as project:
        return Response(
            200, {"ssh_key": ssh_key_json(project.ssh_keys.update(key_id, name, labels))}
        )


def delete(state: State, request: Request) -> Response:
    """DELETE /ssh_keys/{id} (204)."""
    key_id = request.path_id(resource="ssh_key")
    with state.transaction() as project:
        project.ssh_keys.delete(key_id)
    return Response(204)


ROUTES: list[Endpoint[State]] = [
    Endpoint("GET", "/ssh_keys", list_keys),
    Endpoint("POST", "/ssh_keys", create),
    Endpoint("GET", "/ssh_keys/{id}", get_key),
    Endpoint("PUT", "/ssh_keys/{id}", update),
    Endpoint("DELETE", "/ssh_keys/{id}", delete),
]
