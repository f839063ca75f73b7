"""A preview says each option a change makes to a pool, and whether it replaces the stack's
machines (``machines.runtime.pool.option_changes``, ``PoolChange.sentence``)."""

from __future__ import annotations

from decimal import Decimal

from machines.automation.pool_report import PoolChange, PoolSide
from machines.runtime.clouds.ec2.options import Ec2Options, Metadata, RootVolume
from machines.runtime.clouds.hetzner.options import HetznerOptions
from machines.runtime.pool import Pool, option_changes


def change(before: Pool, after: Pool, kept: int = 3) -> str:
    sides = [
        PoolSide(machine_type="t3.small", location="eu-central-1a", kept=kept, settings=s)
        for s in (before, after)
    ]
    return PoolChange(
        pool="ci",
        before=sides[0],
        after=sides[1],
        autoscaler=0,
        deletes_kept=0,
        deletes_autoscaler=0,
        cost_before=Decimal(0),
        cost_after=Decimal(0),
    ).sentence()


def test_an_in_place_option_change_is_said_with_its_values() -> None:
    before = Pool(name="ci", ec2=Ec2Options())
    after = Pool(
        name="ci",
        ec2=Ec2Options(root_volume=RootVolume(size=80), metadata=Metadata(hop_limit=2)),
    )

    assert change(before, after) == (
        "changes pool `ci`'s options: ec2.metadata.hopLimit 1 → 2, ec2.rootVolume.size 30 → "
        "80: in place on its 3 kept machines; the autoscaler's machines get them when next made"
    )


def test_an_option_change_that_replaces_machines_says_so() -> None:
    before = Pool(name="ci", ec2=Ec2Options())
    after = Pool(name="ci", ec2=Ec2Options(root_volume=RootVolume(encrypted=False)))

    assert "replaces its 3 kept machines (ec2.rootVolume.encrypted)" in change(before, after)


def test_hetzner_option_changes_and_an_image_that_replaces() -> None:
    before = Pool(name="ci", hetzner=HetznerOptions())
    after = Pool(name="ci", hetzner=HetznerOptions(ipv4=False, image_selector="role=ci"))

    keys = [(c.key, c.replaces) for c in option_changes(before, after)]

    assert keys == [("hetzner.imageSelector", True), ("hetzner.ipv4", False)]
    assert "replaces its 3 kept machines (hetzner.imageSelector)" in change(before, after)


def test_defaults_written_out_are_no_change_and_a_stack_of_before_says_none() -> None:
    assert option_changes(Pool(name="ci"), Pool(name="ci", ec2=Ec2Options())) == []
    assert option_changes(None, Pool(name="ci", ec2=Ec2Options(shutdown="stop"))) == []
