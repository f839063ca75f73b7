"""Which store a fence URL names: ``s3://bucket/prefix?region=...&endpoint=...`` or
``file:///path`` (Pulumi's backend URL forms, so a stack's backend is its fence's store too);
any other is refused in one line naming the forms.

The fence keeps its objects under ``.orca-fence/`` of the place the URL names (beside a
stack's state, never inside it): ``<place>/.orca-fence/<owner>/<pool>.json``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from machines.runtime.errors import SettingsError
from machines.runtime.fence.files import FileStore
from machines.runtime.fence.store import FOLDER, Store
from machines.runtime.secrets import mask
from machines.runtime.settings import ORCA_FENCE_URL

FORMS = "s3://bucket/prefix?region=...&endpoint=... or file:///path"
"""The forms a fence URL takes, for the refusal of any other."""


def store_of(url: str, environ: Mapping[str, str], variable: str) -> Store:
    """The store ``url`` names (read from ``variable``, for messages); ``SettingsError``
    naming the forms for any other."""
    scheme, separator, rest = url.partition("://")
    if separator and scheme == "file":
        path = Path(rest.partition("?")[0]).expanduser()
        if not str(path) or str(path) == ".":
            raise SettingsError(f"{variable}={mask(url)} names no directory: write {FORMS}")
        return FileStore(path.resolve() / FOLDER)
    if separator and scheme == "s3":
        s3 = importlib.import_module("machines.runtime.fence.s3")  # boto3 with it, only here
        store: Store = s3.S3Store(url, environ, variable)
        return store
    raise SettingsError(
        f"{variable}={mask(url)} is no store a fence can live in: write {FORMS} (a Pulumi "
        f"Cloud or other backend cannot hold it: set {ORCA_FENCE_URL} to one of those)"
    )
