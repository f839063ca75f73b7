"""``arch``: Docker's name of a machine type's architecture, from the cloud's catalogue."""

from __future__ import annotations

import pytest

from machines.runtime.errors import UnknownMachineTypeError
from testkit.clouds import Cloud


def test_arch_is_dockers_name_of_the_types_architecture(cloud: Cloud) -> None:
    provider = cloud.provider()

    assert {name: provider.arch(name) for name in cloud.arches} == cloud.arches


def test_an_unknown_type_raises_naming_it(cloud: Cloud) -> None:
    with pytest.raises(UnknownMachineTypeError, match=r"'x9\.huge'"):
        cloud.provider().arch("x9.huge")


def test_a_type_the_cloud_sells_where_asked_has_no_refusal(cloud: Cloud) -> None:
    spec = cloud.spec()

    assert cloud.provider().sells(spec.machine_type, spec.location) is None


def test_a_type_the_cloud_lacks_is_refused_naming_it(cloud: Cloud) -> None:
    refusal = cloud.provider().sells("x9.huge", cloud.spec().location)

    assert refusal is not None
    assert "'x9.huge'" in refusal


def test_a_location_the_type_is_not_sold_in_is_refused_naming_it(cloud: Cloud) -> None:
    refusal = cloud.provider().sells(cloud.spec().machine_type, "mars1")

    assert refusal is not None
    assert "'mars1'" in refusal
