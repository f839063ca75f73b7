"""``arch``: Docker's name of a machine type's architecture, from the cloud's catalogue."""

from __future__ import annotations

import pytest

from machines.errors import UnknownMachineTypeError
from testkit.clouds import Cloud


def test_arch_is_dockers_name_of_the_types_architecture(cloud: Cloud) -> None:
    provider = cloud.provider()

    assert {name: provider.arch(name) for name in cloud.arches} == cloud.arches


def test_an_unknown_type_raises_naming_it(cloud: Cloud) -> None:
    with pytest.raises(UnknownMachineTypeError, match=r"'x9\.huge'"):
        cloud.provider().arch("x9.huge")
