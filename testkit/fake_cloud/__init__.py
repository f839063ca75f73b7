"""A third cloud, kept in a JSON file: what adding a cloud takes, and nothing more.

It is built as a cloud's packages are, in one folder: ``facts.py`` (the runtime registry's
``FACTS``), ``options.py``, ``settings.py``, ``provider.py`` (only the hooks ``Provider``
leaves to a cloud) and ``store.py`` (its API) for the runtime; ``config.py``
(``DEPLOYMENT``) and ``components.py`` (``build``; its servers are Python dynamic resources,
so the real engine runs a stack of it with no plugin of its own) for the program. Nothing
outside this folder names it: it joins through the two registries' lines alone, added by
``register`` in this process, and in every child process (the CLI, the engine's language
host and dynamic provider) by ``site/sitecustomize.py``, which ``child_env`` puts first on
``PYTHONPATH``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from machines.program import clouds as program_clouds
from machines.runtime import clouds as runtime_clouds
from testkit.fake_cloud.options import KIND, MACHINE, FakeOptions
from testkit.fake_cloud.settings import FAKE_CLOUD_STORE, FAKE_CLOUD_TOKEN
from testkit.fake_cloud.store import LOCATIONS, NO_STOCK_CODE, TYPES, Store

if TYPE_CHECKING:
    import pytest

__all__ = [
    "KIND",
    "LOCATIONS",
    "MACHINE",
    "NO_STOCK_CODE",
    "TOKEN",
    "TYPES",
    "FakeOptions",
    "Store",
    "child_env",
    "register",
    "registry_lines",
]

TOKEN = "fake-token-0123456789"
SITE = Path(__file__).parent / "site"
ROOT = Path(__file__).parents[2]

RUNTIME_LINE = (KIND, "testkit.fake_cloud.facts")
PROGRAM_LINE = (KIND, "testkit.fake_cloud")
"""The line each registry gets: the runtime's names the facts, the program's the package
with ``config`` and ``components``."""


def registry_lines() -> None:
    """Add the fake cloud's line to both registries of this process."""
    runtime_clouds.CLOUDS.setdefault(*RUNTIME_LINE)
    program_clouds.CLOUDS.setdefault(*PROGRAM_LINE)


def register(monkeypatch: pytest.MonkeyPatch, store: Path) -> Store:
    """The fake cloud in both registries of this process for the test, its settings in the
    environment, and its (empty) store at ``store``."""
    monkeypatch.setitem(runtime_clouds.CLOUDS, *RUNTIME_LINE)
    monkeypatch.setitem(program_clouds.CLOUDS, *PROGRAM_LINE)
    monkeypatch.setenv(FAKE_CLOUD_STORE, str(store))
    monkeypatch.setenv(FAKE_CLOUD_TOKEN, TOKEN)
    return Store(store)


def child_env() -> dict[str, str]:
    """``PYTHONPATH`` for child processes that must know the fake cloud too: its
    ``sitecustomize`` first, then this checkout (for ``testkit``), then what was there."""
    paths = [str(SITE), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {"PYTHONPATH": os.pathsep.join(paths)}
