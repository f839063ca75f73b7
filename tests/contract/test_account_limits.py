"""A cloud account at its limit (Hetzner's project limits, EC2's on-demand quota): one
``failed`` answer naming the limit and how to have it raised, remembered so the next creates
send the cloud nothing until the window ends or this provider deletes a machine."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from machines.runtime.clouds import cloud as facts_of
from machines.runtime.provider import Provider
from testkit.clock import ManualClock
from testkit.clouds import Cloud


def test_a_full_account_is_one_failed_answer_naming_its_limit_and_how_to_raise_it(
    cloud: Cloud,
) -> None:
    provider = cloud.provider()
    cloud.account_full()
    before = cloud.creates()

    refused = provider.create(cloud.spec("ci-1"))

    facts = facts_of(cloud.kind)
    assert refused.failed
    assert not refused.may_exist
    assert refused.code in facts.account_limit_codes
    assert "\n" not in refused.reason
    assert f"the {facts.name} account is at its limit" in refused.reason
    assert facts.account_limit_help in refused.reason
    assert "ORCA_NO_STOCK_TTL" in refused.reason
    assert cloud.creates() == before + 1
    assert cloud.live() == []


def test_a_full_account_is_remembered_so_the_next_creates_send_nothing(cloud: Cloud) -> None:
    provider = cloud.provider()
    cloud.account_full()
    first = provider.create(cloud.spec("ci-1"))
    sent = cloud.creates()

    again = [provider.create(cloud.spec(f"ci-{n}")) for n in (2, 3)]

    assert cloud.creates() == sent
    for answer in again:
        assert answer.failed
        assert answer.code == first.code
        assert "so no create was sent" in answer.reason
        assert "remembered for" in answer.reason
        assert facts_of(cloud.kind).account_limit_help in answer.reason
    assert provider.offers(cloud.spec().machine_type) == []


def test_a_delete_by_the_provider_forgets_the_full_account(cloud: Cloud) -> None:
    provider = cloud.provider()
    made = provider.create(cloud.spec("ci-1"))
    assert made.ok, made.reason
    assert made.machine is not None
    cloud.account_full()
    assert provider.create(cloud.spec("ci-2")).failed
    sent = cloud.creates()

    assert provider.delete(made.machine.id)
    provider.create(cloud.spec("ci-3"))

    assert cloud.creates() == sent + 1  # asked again: the delete may have made room


def test_the_full_account_is_forgotten_when_its_window_ends(
    cloud: Cloud, make_clocked: Callable[..., Provider], clock: ManualClock
) -> None:
    provider = make_clocked(ORCA_NO_STOCK_TTL="60")
    cloud.account_full()
    assert provider.create(cloud.spec("ci-1")).failed
    sent = cloud.creates()
    clock.advance(59)
    assert provider.create(cloud.spec("ci-2")).failed
    assert cloud.creates() == sent

    clock.advance(2)
    provider.create(cloud.spec("ci-3"))

    assert cloud.creates() == sent + 1


@pytest.mark.parametrize("ttl", ["0"])
def test_without_a_window_every_create_asks(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch, ttl: str
) -> None:
    monkeypatch.setenv("ORCA_NO_STOCK_TTL", ttl)
    provider = cloud.provider()
    cloud.account_full()
    before = cloud.creates()

    answers = [provider.create(cloud.spec(f"ci-{n}")) for n in (1, 2)]

    assert all(a.failed for a in answers)
    assert cloud.creates() == before + 2
    assert "no create is sent" not in answers[0].reason
