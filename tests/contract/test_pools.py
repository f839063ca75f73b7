"""The one pool object on both clouds: ``Provider.of`` reads ``ORCA_POOLS`` in one place, and
``provider.pool`` / ``provider.pools`` give an autoscaler each pool's type, location, market,
max and options; the variables of older stacks keep working, and both at once are refused in
one line."""

from __future__ import annotations

import json

import pytest

from machines import SettingsError
from machines.runtime.models import Market
from testkit.clouds import Cloud
from testkit.specs import TYPICAL


def test_an_autoscaler_reads_each_pools_settings_from_the_provider(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine_type, location = TYPICAL[cloud.kind]
    monkeypatch.setenv(
        "ORCA_POOLS",
        json.dumps(
            [
                {"name": "ci", "machineType": machine_type, "location": location, "max": 1},
                {"name": "lab", "machineType": machine_type, "location": location},
            ]
        ),
    )
    provider = cloud.provider()

    assert [p.name for p in provider.pools()] == ["ci", "lab"]
    ci = provider.pool("ci")
    spec = cloud.spec("ci-1", machine_type=ci.machine_type, location=ci.location)
    assert (ci.machine_type, ci.location, ci.market, ci.max) == (
        machine_type,
        location,
        Market.ON_DEMAND,
        1,
    )
    assert provider.create(spec).ok
    full = provider.create(cloud.spec("ci-2"))
    assert full.failed
    assert "pool ci has 1 machines, the max" in full.reason
    assert provider.pool("other").max is None


def test_the_variables_of_older_stacks_are_still_read(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=20")

    assert cloud.provider().pool("ci").max == 20


def test_both_forms_at_once_are_refused_in_one_line(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=20")
    monkeypatch.setenv("ORCA_POOLS", json.dumps([{"name": "ci", "max": 20}]))

    with pytest.raises(SettingsError, match="ORCA_POOLS and ORCA_POOL_MAX are both set.*unset"):
        cloud.provider()


@pytest.mark.parametrize(
    "value",
    ["ci=20", "[{}]", '[{"name": "ci", "color": "red"}]', '[{"name": "ci", "max": 0}]'],
)
def test_a_malformed_orca_pools_names_the_variable(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ORCA_POOLS", value)

    with pytest.raises(SettingsError, match="ORCA_POOLS"):
        cloud.provider()
