"""A pool's reaper's diff: when its pool's machines stop using a shared resource it is
replaced, the old one deleted first (the autoscaler's machines there go before the
resource), and a reaper made before it named its shared resources never changes for it."""

from __future__ import annotations

from typing import Any

from machines.program.reaper import PoolReaper

BEFORE = {
    "provider": "hetzner",
    "owner": "prod",
    "pool": "ci",
    "env": {"ORCA_HCLOUD_FIREWALL": "prod-pools"},
    "credentials": {},
    "shared": ["firewall:prod-pools", "network:prod-ci"],
}


def diff(olds: dict[str, Any], news: dict[str, Any]) -> tuple[bool, list[str], bool]:
    found = PoolReaper().diff("prod/ci", olds, news)
    return bool(found.changes), list(found.replaces or []), bool(found.delete_before_replace)


def test_a_pool_leaving_a_shared_resource_replaces_its_reaper_deleting_the_old_first():
    left = {**BEFORE, "shared": ["firewall:prod-pools"]}

    assert diff(BEFORE, left) == (True, ["shared"], True)


def test_a_pool_joining_one_updates_its_reaper_and_an_unchanged_one_is_the_same():
    joined = {**BEFORE, "shared": [*BEFORE["shared"], "placementGroup:prod-spread"]}

    assert diff(BEFORE, joined) == (True, [], False)
    assert diff(BEFORE, dict(BEFORE)) == (False, [], False)


def test_a_reaper_made_before_it_named_its_shared_resources_is_the_same():
    old = {key: value for key, value in BEFORE.items() if key != "shared"}

    assert diff(old, BEFORE) == (False, [], False)
    assert diff(old, {**BEFORE, "shared": []}) == (False, [], False)
