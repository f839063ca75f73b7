"""A stack's state as its backend holds it, read once per operation: whether the stack
exists, its checkpoint (resources, pending operations) and its outputs.

A ``file://`` backend keeps each stack's checkpoint as a file
(``.pulumi/stacks/<project>/<stack>.json``, ``.json.gz`` when compressed; older backends
without the project's folder), the one ``pulumi stack export`` prints: it is read there,
and the engine is not started for it. Any other backend is asked through the engine
(``pulumi stack export``, which needs no passphrase: secrets stay encrypted). The outputs
are the stack resource's, secrets shown as ``[secret]`` as ``pulumi stack output`` shows
them.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from machines.automation.project import short_name

STACK_TYPE = "pulumi:pulumi:Stack"
SECRET_SIG = "4dabf18193072939515e22adb298388d"  # noqa: S105 (a marker, no secret)
"""The key that marks a secret value in a checkpoint (Pulumi's ``sig.Secret``)."""
SECRET_SHOWN = "[secret]"  # noqa: S105 (what is shown instead)

Export = Callable[[], Mapping[str, object] | None]
"""``pulumi stack export`` of the stack (``{"version", "deployment"}``), None when the
backend has no such stack."""


@dataclass(frozen=True)
class StackState:
    """The stack in its backend now: ``exists``, its checkpoint's ``deployment`` (empty for a
    stack never run) and that checkpoint's format ``version``."""

    exists: bool
    deployment: Mapping[str, object] = field(default_factory=dict)
    version: int | None = None

    @property
    def outputs(self) -> dict[str, object]:
        """The stack's outputs, secrets as ``[secret]``; empty for a stack not brought up."""
        for resource in resources(self.deployment):
            if resource.get("type") == STACK_TYPE:
                found = resource.get("outputs")
                shown = masked(found) if isinstance(found, Mapping) else {}
                return dict(shown) if isinstance(shown, Mapping) else {}
        return {}

    def settled(self, deployment: Mapping[str, object]) -> StackState:
        """The same stack with ``deployment`` imported in place of its checkpoint."""
        return StackState(self.exists, deployment, self.version)


def resources(deployment: Mapping[str, object]) -> list[Mapping[str, object]]:
    """The checkpoint's resources."""
    listed = deployment.get("resources")
    return [r for r in listed if isinstance(r, Mapping)] if isinstance(listed, list) else []


def masked(value: object) -> object:
    """``value`` with each secret replaced by ``[secret]``."""
    if isinstance(value, Mapping):
        if SECRET_SIG in value:
            return SECRET_SHOWN
        return {str(k): masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def checkpoint_files(backend_url: str, project: str, stack: str, root: Path) -> list[Path]:
    """Where a ``file://`` backend may keep the stack's checkpoint; empty for other backends
    and for a ``file://`` URL of a form not read here (the engine is asked then)."""
    url = urlparse(backend_url)
    if url.scheme != "file" or not project:
        return []
    path = unquote(url.path)
    if url.netloc in ("", "localhost"):
        base = Path(path)
    elif url.netloc == "~":
        base = Path.home() / path.lstrip("/")
    elif url.netloc in (".", ".."):
        base = root / url.netloc / path.lstrip("/")  # as the engine, run in the project
    else:
        return []
    stacks = base / ".pulumi" / "stacks"
    name = short_name(stack)
    return [
        stacks / project / f"{name}.json",
        stacks / project / f"{name}.json.gz",
        stacks / f"{name}.json",
        stacks / f"{name}.json.gz",
    ]


def read_checkpoint(path: Path) -> Mapping[str, object] | None:
    """The checkpoint in ``path`` as ``pulumi stack export`` prints it; None when unreadable."""
    try:
        raw = path.read_bytes()
        text = gzip.decompress(raw) if path.suffix == ".gz" else raw
        saved = json.loads(text)
    except (OSError, ValueError):
        return None
    checkpoint = saved.get("checkpoint") if isinstance(saved, dict) else None
    if not isinstance(checkpoint, dict):
        return None
    latest = checkpoint.get("latest")
    return {"version": saved.get("version"), "deployment": latest or {}}


def read_state(
    backend_url: str, project: str, stack: str, root: Path, export: Export
) -> StackState:
    """The stack's state: from its checkpoint file in a ``file://`` backend (a backend
    without it holds no such stack), else by ``export``. ``root``: the project's directory,
    where the engine runs."""
    files = checkpoint_files(backend_url, project, stack, root)
    if files:
        for path in files:
            if path.is_file():
                exported = read_checkpoint(path)
                if exported is not None:
                    return state_of(exported)
                break
        else:
            return StackState(exists=False)
    exported = export()
    return StackState(exists=False) if exported is None else state_of(exported)


def state_of(exported: Mapping[str, object]) -> StackState:
    """A ``pulumi stack export``'s answer as the stack's state."""
    deployment = exported.get("deployment")
    version = exported.get("version")
    return StackState(
        exists=True,
        deployment=deployment if isinstance(deployment, Mapping) else {},
        version=version if isinstance(version, int) else None,
    )
