"""Creates a killed engine run left pending in a stack's checkpoint, and what a plain
``pulumi up`` is told about them.

The engine records a create as pending when it begins and as done when the cloud answers; a
run killed outright in between leaves the operation pending while the machine may exist. A
plain ``pulumi up`` would only warn and create it again (Hetzner refuses the taken name, EC2
makes a second instance), so the program stops it, naming the command that recovers
(``machines.automation.recovery`` adopts or clears them). Read from ``file://`` backends,
the ones whose checkpoint the program can reach without credentials.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from machines.program.clouds import machine_resources
from machines.runtime.labels import POOL_LABEL
from machines.runtime.settings import PULUMI_AUTOMATION_API, PULUMI_BACKEND_URL


def machine_types() -> dict[str, str]:
    """The machine resources the program declares, and the input holding their labels."""
    return {token: cls.machine_labels for token, cls in machine_resources().items()}


@dataclass(frozen=True)
class PendingCreate:
    """A create the checkpoint records as begun and never ended."""

    urn: str
    type: str
    name: str
    pool: str

    @property
    def key(self) -> str:
        """The resource's name in the stack."""
        return self.urn.rsplit("::", 1)[-1]


def pending_creates(deployment: Mapping[str, object]) -> list[PendingCreate]:
    """The pending creates of a checkpoint's deployment, with each machine's cloud name and pool."""
    found = []
    for op in _list(deployment.get("pending_operations")):
        if not isinstance(op, Mapping) or op.get("type") != "creating":
            continue
        resource = op.get("resource")
        if not isinstance(resource, Mapping):
            continue
        kind = str(resource.get("type", ""))
        inputs = resource.get("inputs")
        inputs = inputs if isinstance(inputs, Mapping) else {}
        cloud = machine_resources().get(kind)
        labels = inputs.get(cloud.machine_labels) if cloud else None
        labels = labels if isinstance(labels, Mapping) else {}
        named = cloud.machine_name_label if cloud else ""
        name = str(inputs.get("name") or (labels.get(named) if named else "") or "")
        pool = labels.get(POOL_LABEL)
        found.append(
            PendingCreate(
                str(resource.get("urn", "")), kind, name, pool if isinstance(pool, str) else ""
            )
        )
    return found


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def in_file_backend(backend_url: str, project: str, stack: str) -> list[PendingCreate]:
    """The pending creates of ``stack`` in a ``file://`` backend; none for other backends."""
    url = urlparse(backend_url)
    if url.scheme != "file":
        return []
    checkpoint = Path(unquote(url.path)) / ".pulumi" / "stacks" / project / f"{stack}.json"
    try:
        saved = json.loads(checkpoint.read_text())
    except (OSError, ValueError):
        return []
    latest = saved.get("checkpoint", {}).get("latest") if isinstance(saved, dict) else None
    return pending_creates(latest) if isinstance(latest, Mapping) else []


def pending_creates_error(stack: str, pending: list[PendingCreate]) -> str:
    """What a plain ``pulumi up`` is told instead of creating the pending machines again."""
    names = ", ".join(p.key for p in pending)
    return (
        f"stack {stack}: a killed run left {len(pending)} create(s) pending ({names}), whose "
        f"machines may exist: run `orca-machines up {stack}`, which adopts or clears them and "
        "releases a lock the killed run left; a plain `pulumi up` would create them again"
    )


def refused_plain_run(environ: Mapping[str, str], project: str, stack: str) -> str | None:
    """The error that stops a plain ``pulumi`` run (not through Automation, which recovers first)
    on a stack a killed run left creates pending in; None when there is nothing to say."""
    if environ.get(PULUMI_AUTOMATION_API) == "true":
        return None
    left = in_file_backend(environ.get(PULUMI_BACKEND_URL, ""), project, stack)
    return pending_creates_error(stack, left) if left else None
