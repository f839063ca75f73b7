"""Names: every name the runtime's rule allows is the autoscaler's to take, and the stack's
machines (``<owner>-<pool>-<n>.stack``) never want one of them."""

from __future__ import annotations

import pytest

from machines.runtime.labels import machine_name, stack_labels
from testkit.clouds import Cloud


@pytest.mark.parametrize(
    ("owner", "name", "pool"),
    [("orca", "orca-lab-7", "lab"), ("prod", "prod-ci-12", "ci"), ("bc", "bc-lab-auto-3", "lab")],
)
def test_a_name_prefixed_with_the_owner_is_created(
    cloud: Cloud, owner: str, name: str, pool: str
) -> None:
    created = cloud.provider(owner).create(cloud.spec(name, pool=pool))

    assert created.ok, created.reason
    assert created.machine is not None
    assert created.machine.name == name


def test_the_stacks_machine_and_the_autoscalers_of_the_same_host_name_both_exist(
    cloud: Cloud,
) -> None:
    kept = cloud.foreign(machine_name("prod", "ci", 1), stack_labels("ci", "prod"))

    created = cloud.provider("prod").create(cloud.spec("prod-ci-1"))

    assert created.ok, created.reason
    assert created.machine is not None
    assert sorted(cloud.live()) == sorted([kept, created.machine.id])


def test_a_name_a_stack_machine_of_the_old_form_holds_is_refused_not_taken_over(
    cloud: Cloud,
) -> None:
    kept = cloud.foreign("prod-ci-1", stack_labels("ci", "prod"))

    created = cloud.provider("prod").create(cloud.spec("prod-ci-1"))

    assert created.failed
    assert f"taken by machine {kept}, which the stack keeps" in created.reason
    assert "choose another name" in created.reason
    assert cloud.live() == [kept]
