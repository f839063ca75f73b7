"""The provider interface: the few calls the autoscaler makes, the same on every cloud.

Like the cluster-autoscaler's cloud provider, it is small on purpose, with one module per
cloud behind it. ``Provider.of`` imports a cloud's module only when that cloud is asked
for, so ``import machines`` never loads boto3 or Pulumi.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

from machines.clouds import PROVIDERS
from machines.errors import UnknownProviderError
from machines.labels import check_owner
from machines.models import Created, Machine, MachineSpec


def kinds() -> tuple[str, ...]:
    """The provider kinds ``Provider.of`` knows."""
    return tuple(PROVIDERS)


class Provider(ABC):
    """One cloud account's machines for one owner (a deployment, i.e. a Pulumi stack).

    Subclasses set ``kind`` and build themselves from settings in ``from_env``.
    """

    kind: ClassVar[str]

    def __init__(self, owner: str, image: str) -> None:
        self.owner = check_owner(owner)
        self.image = image

    @staticmethod
    def of(kind: str, owner: str = "", environ: Mapping[str, str] | None = None) -> Provider:
        """The provider ``kind`` configured from ``environ`` (default: this process's)."""
        target = PROVIDERS.get(kind)
        if target is None:
            raise UnknownProviderError(
                f"unknown provider kind {kind!r}: use one of {', '.join(sorted(PROVIDERS))}"
            )
        module_name, _, class_name = target.partition(":")
        cls: type[Provider] = getattr(importlib.import_module(module_name), class_name)
        return cls.from_env(owner, environ)

    @classmethod
    @abstractmethod
    def from_env(cls, owner: str, environ: Mapping[str, str] | None = None) -> Provider:
        """Build the provider from environment variables; raise ``SettingsError`` if short."""

    @abstractmethod
    def arch(self, machine_type: str) -> str:
        """Docker's architecture name of a machine type (``amd64``, ``arm64``), cached."""

    @abstractmethod
    def create(self, spec: MachineSpec) -> Created:
        """Ask for one machine; return at once, without waiting for it to boot."""

    @abstractmethod
    def machines(self, pool: str) -> list[Machine]:
        """Every machine of ``pool`` that belongs to this owner, and no other."""

    @abstractmethod
    def delete(self, machine_id: str) -> bool:
        """Delete this owner's pool machine; True once it is gone, now or before."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, owner={self.owner!r})"
