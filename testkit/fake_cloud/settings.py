"""The fake cloud's variables: its token, and the file that stands for its API."""

from __future__ import annotations

from collections.abc import Mapping

from machines.runtime.settings import required

FAKE_CLOUD_TOKEN = "FAKE_CLOUD_TOKEN"
FAKE_CLOUD_STORE = "FAKE_CLOUD_STORE"
"""The JSON file the fake cloud keeps its servers in: every process that names it (the test,
the CLI, the engine's language host and the dynamic provider) sees the same cloud."""

CLOUD = "the fake cloud"


def fake_env(store: str) -> dict[str, str]:
    """The runtime's settings of a fake deployment, as variables (never the token)."""
    return {FAKE_CLOUD_STORE: store}


def store_path(env: Mapping[str, str]) -> str:
    """The store's file, refused when unset; the token must be set too, as a cloud's would."""
    required(env, FAKE_CLOUD_TOKEN, secret=True)
    return required(env, FAKE_CLOUD_STORE)
