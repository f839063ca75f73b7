"""The stack's backend, as plain ``pulumi`` resolves it, and the fence that lives there.

One home for both faces: the automation's ``Project`` and the program of a plain ``pulumi
up`` (which knows nothing of the automation) read the backend alike, so a stack's machines
and the autoscaler's are counted in one fence whichever of them makes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from machines.runtime.settings import ORCA_FENCE_URL, PULUMI_BACKEND_URL

FILE_SCHEME = "file://"
FENCE_SCHEMES = ("file://", "s3://")
"""The backends a fence can live in (``machines.runtime.fence.url``)."""


def declared_backend(root: Path, settings: Mapping[str, object]) -> str:
    """The backend a project's ``Pulumi.yaml`` (``settings``, in ``root``) names (``backend:
    url:``, which plain ``pulumi`` reads too): a ``file://`` path relative to ``root`` made
    on demand and given as an absolute URL (the engine takes a relative one from the
    directory it runs in); empty when it names none."""
    backend = settings.get("backend")
    url = str(backend.get("url") or "") if isinstance(backend, Mapping) else ""
    if not url.startswith(FILE_SCHEME):
        return url
    path, _, query = url.removeprefix(FILE_SCHEME).partition("?")
    state = root / Path(path).expanduser()
    state.mkdir(parents=True, exist_ok=True)
    return state.as_uri() + (f"?{query}" if query else "")


def stack_backend(root: Path, settings: Mapping[str, object], environ: Mapping[str, str]) -> str:
    """``$PULUMI_BACKEND_URL``, else the project's own (``declared_backend``)."""
    return environ.get(PULUMI_BACKEND_URL, "") or declared_backend(root, settings)


def fence_url(backend: str, environ: Mapping[str, str]) -> str:
    """The fence of a stack's pools: ``$ORCA_FENCE_URL`` when set, else the stack's
    ``backend`` when a fence can live there (``s3://``, ``file://``; a Pulumi Cloud backend
    cannot hold it: none then, as the docs say)."""
    given = environ.get(ORCA_FENCE_URL, "")
    if given:
        return given
    return backend if backend.startswith(FENCE_SCHEMES) else ""


def program_fence_url(root: Path, environ: Mapping[str, str]) -> str:
    """The fence of the stacks of the project in ``root`` (its ``Pulumi.yaml`` read here),
    as a program run by plain ``pulumi`` finds it (``fence_url``)."""
    try:
        loaded = yaml.safe_load((root / "Pulumi.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):  # the engine read it first: only an odd run gets here
        loaded = None
    settings = loaded if isinstance(loaded, Mapping) else {}
    return fence_url(stack_backend(root, settings, environ), environ)
