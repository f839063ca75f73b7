"""A fake deployment's settings: the store its servers are kept in (``fake:store``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from machines.program.config.models import BaseDeployment, Name
from testkit.fake_cloud.options import MACHINE, FakeOptions
from testkit.fake_cloud.settings import FAKE_CLOUD_STORE, FAKE_CLOUD_TOKEN, fake_env

STORE_KEY = "fake:store"
TOKEN_KEY = "fake:token"


class FakeDeployment(BaseDeployment):
    """A deployment on the fake cloud: servers in its store, one per pool machine."""

    provider_keys: ClassVar[tuple[str, ...]] = (STORE_KEY,)
    missing_hints: ClassVar[dict[str, str]] = {STORE_KEY: "name the store's file"}
    provider_namespace: ClassVar[str] = "fake"
    provider_config: ClassVar[frozenset[str]] = frozenset({"store", "token"})
    models: ClassVar[tuple[type[BaseModel], ...]] = (FakeOptions,)
    credentials: ClassVar[dict[str, str]] = {TOKEN_KEY: FAKE_CLOUD_TOKEN}
    setting_keys: ClassVar[dict[str, str]] = {FAKE_CLOUD_STORE: STORE_KEY}
    plugin: ClassVar[str] = ""
    """Its machines are Python dynamic resources: no plugin of its own."""
    machine_resource: ClassVar[str] = MACHINE
    machine_labels: ClassVar[str] = "labels"
    machine_type_key: ClassVar[str] = "machineType"

    provider: Literal["fake"]
    store: Name = Field(alias=STORE_KEY)

    def env(self) -> dict[str, str]:
        return fake_env(self.store)


DEPLOYMENT = FakeDeployment
