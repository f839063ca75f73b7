"""SSH key endpoints: create, list (by name, fingerprint, label selector), get, update, delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.labels import validate_labels
from emulator.listing import page_response, selector_from, sort_items
from emulator.models import SSHKey
from emulator.render import ssh_key_json
from emulator.routing import Request, Response, Router
from emulator.state import State
from emulator.validation import required_str, resource_name

SSH_KEY_SORT_KEYS: dict[str, Callable[[SSHKey], Any]] = {
    "id": lambda k: k.id,
    "name": lambda k: k.name,
}


def register(router: Router, state: State) -> None:
    """Add the /ssh_keys routes."""

    def create(request: Request) -> Response:
        body = request.body
        name = resource_name(body)
        public_key = required_str(body, "public_key")
        labels = validate_labels(body.get("labels"))
        with state.transaction() as project:
            key = project.create_ssh_key(name, public_key, labels)
            return Response(201, {"ssh_key": ssh_key_json(key)})

    def list_keys(request: Request) -> Response:
        selector = selector_from(request)
        name = request.first("name")
        fingerprint = request.first("fingerprint")
        with state.transaction() as project:
            chosen = [
                k
                for k in project.ssh_keys.values()
                if (name is None or k.name == name)
                and (fingerprint is None or k.fingerprint == fingerprint)
                and selector.matches(k.labels)
            ]
            ordered = sort_items(chosen, request.every("sort"), SSH_KEY_SORT_KEYS)
            return page_response("ssh_keys", ordered, request, ssh_key_json)

    def get_key(request: Request) -> Response:
        key_id = request.path_id(resource="ssh_key")
        with state.transaction() as project:
            return Response(200, {"ssh_key": ssh_key_json(project.ssh_key(key_id))})

    def update(request: Request) -> Response:
        key_id = request.path_id(resource="ssh_key")
        body = request.body
        name = resource_name(body) if body.get("name") is not None else None
        labels = validate_labels(body["labels"]) if body.get("labels") is not None else None
        with state.transaction() as project:
            return Response(
                200, {"ssh_key": ssh_key_json(project.update_ssh_key(key_id, name, labels))}
            )

    def delete(request: Request) -> Response:
        key_id = request.path_id(resource="ssh_key")
        with state.transaction() as project:
            project.delete_ssh_key(key_id)
        return Response(204)

    router.add("GET", "/ssh_keys", list_keys)
    router.add("POST", "/ssh_keys", create)
    router.add("GET", "/ssh_keys/{id}", get_key)
    router.add("PUT", "/ssh_keys/{id}", update)
    router.add("DELETE", "/ssh_keys/{id}", delete)
