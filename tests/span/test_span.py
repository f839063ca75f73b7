"""A pool whose places span Hetzner (the emulator) and EC2 (moto behind the fault proxy):
where its machines are made, what create answers, its max over both clouds, and the calls
an autoscaler makes on machines of both."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest

from machines import Machine, MachineSpec, Provider, SettingsError
from machines.runtime.models import Market
from machines.runtime.pool import Place
from machines.runtime.provider import Provider as BaseProvider
from testkit.span import PLACES, POOL, Span, pools_json
from testkit.specs import OWNER

FSN1, NBG1, EC2 = PLACES
EC2_SPOT = EC2.model_copy(update={"market": Market.SPOT})


def autoscaler_create(provider: BaseProvider, name: str) -> MachineSpec:
    """What an autoscaler asks for, as docs/runtime.md's pools loop writes it: the pool's
    own type and location (its first place's), nothing of clouds."""
    pool = provider.pool(POOL)
    return MachineSpec(
        name=name, machine_type=pool.machine_type, location=pool.location, pool=pool.name
    )


def test_without_stock_at_both_hetzner_places_the_machine_is_made_on_ec2(span: Span) -> None:
    provider = span.provider()
    span.out_of_stock(FSN1, NBG1)

    created = provider.create(autoscaler_create(provider, "ci-1"))

    assert created.ok, created.reason
    machine = created.machine
    assert machine is not None
    assert (machine.cloud, machine.machine_type, machine.location) == (
        "ec2",
        "t4g.micro",
        "eu-central-1a",
    )
    assert machine.id.startswith("ec2:i-")
    assert [p.split(":")[0] for p in created.passed_over] == [str(FSN1), str(NBG1)]
    tags = span.instance_tags("ci-1")
    assert {k: tags[k] for k in ("orca", "orca-pool", "orca-owner", "Name")} == {
        "orca": "pool",
        "orca-pool": POOL,
        "orca-owner": OWNER,
        "Name": "ci-1",
    }
    assert [(m.name, m.cloud, m.id) for m in provider.machines(POOL)] == [
        ("ci-1", "ec2", machine.id)
    ]


def test_places_known_to_be_out_are_passed_over_without_a_request(span: Span) -> None:
    provider = span.provider()
    span.out_of_stock(FSN1, NBG1)
    fresh = provider.create(autoscaler_create(provider, "ci-1"))
    assert fresh.ok
    assert span.server_posts() == 0

    assert all("its catalogue's stock" in why for why in fresh.passed_over)


def test_no_stock_answers_are_remembered_and_those_places_passed_over(span: Span) -> None:
    provider = span.provider()
    assert provider.create(autoscaler_create(provider, "ci-1")).ok  # reads the catalogue
    span.out_of_stock(FSN1, NBG1)  # the catalogue read (kept ORCA_OFFERS_TTL) says in stock
    asked = provider.create(autoscaler_create(provider, "ci-2"))
    posts = span.server_posts()

    again = provider.create(autoscaler_create(provider, "ci-3"))

    assert asked.machine is not None
    assert asked.machine.cloud == "ec2"
    assert posts == 3  # ci-1, then one refused in each Hetzner place
    assert again.ok
    assert again.machine is not None
    assert again.machine.cloud == "ec2"
    assert span.server_posts() == posts
    assert all("remembered" in why and "without a request" in why for why in again.passed_over)


def test_stock_coming_back_sends_the_next_machine_to_the_first_place(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_OFFERS_TTL", "0")  # the catalogue read at every create
    provider = span.provider()
    span.out_of_stock(FSN1, NBG1)
    elsewhere = provider.create(autoscaler_create(provider, "ci-1"))
    span.out_of_stock()

    back = provider.create(autoscaler_create(provider, "ci-2"))

    assert elsewhere.machine is not None
    assert elsewhere.machine.cloud == "ec2"
    assert back.ok
    assert back.machine is not None
    assert (back.machine.cloud, back.machine.location, back.passed_over) == ("hetzner", "fsn1", ())
    assert back.machine.id.isdigit()  # the home cloud's ids are as they always were


def test_no_place_with_stock_is_no_stock_naming_every_place(span: Span) -> None:
    provider = span.provider()
    span.out_of_stock(FSN1, NBG1, EC2)

    created = provider.create(autoscaler_create(provider, "ci-1"))

    assert created.no_stock
    assert len(created.passed_over) == 3
    for place in PLACES:
        assert str(place) in created.reason
    assert span.live() == {"hetzner": [], "ec2": []}


def test_the_pools_max_counts_its_machines_on_both_clouds(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(max=2))
    provider = span.provider()
    assert provider.create(autoscaler_create(provider, "ci-1")).ok  # Hetzner, fsn1
    span.out_of_stock(FSN1, NBG1)
    second = provider.create(autoscaler_create(provider, "ci-2"))
    assert second.machine is not None
    assert second.machine.cloud == "ec2"
    span.out_of_stock()
    posts, launches = span.server_posts(), span.run_instances()

    third = provider.create(autoscaler_create(provider, "ci-3"))

    assert third.failed
    assert "pool ci has 2 machines" in third.reason
    assert (span.server_posts(), span.run_instances()) == (posts, launches)


def test_machines_keep_advice_and_delete_cover_both_clouds(span: Span) -> None:
    provider = span.provider()
    on_hetzner = provider.create(autoscaler_create(provider, "ci-1")).machine
    span.out_of_stock(FSN1, NBG1)
    on_ec2 = provider.create(autoscaler_create(provider, "ci-2")).machine
    assert on_hetzner is not None
    assert on_ec2 is not None

    listed = provider.machines(POOL)
    advice = {a.machine.name: a for a in provider.keep_advice(listed)}

    assert [(m.name, m.cloud) for m in listed] == [("ci-1", "hetzner"), ("ci-2", "ec2")]
    # Each by its own cloud's billing: Hetzner's started hour is kept, EC2's per-second
    # billing keeps nothing past the margin.
    assert not advice["ci-1"].release
    assert advice["ci-1"].keep_for > 50 * 60
    assert advice["ci-2"].release
    for a in advice.values():
        assert a.paid_until == provider.paid_until(a.machine)
    assert provider.delete(on_ec2.id)
    assert provider.delete(on_hetzner.id)
    assert span.live() == {"hetzner": [], "ec2": []}
    assert {m.status for m in provider.machines(POOL)} == {"deleting"}


def test_keep_advice_on_both_clouds_goes_by_the_autoscalers_tick(span: Span) -> None:
    provider = span.provider()
    on_hetzner = provider.create(autoscaler_create(provider, "ci-1")).machine
    span.out_of_stock(FSN1, NBG1)
    provider.create(autoscaler_create(provider, "ci-2"))
    assert on_hetzner is not None
    assert on_hetzner.created is not None
    look = on_hetzner.created + timedelta(minutes=50)

    advice = {
        a.machine.name: a for a in provider.keep_advice(provider.machines(POOL), look, tick=300)
    }

    # Hetzner's paid hour is let go at the last look before 58 minutes, EC2's second at once
    assert (advice["ci-1"].keep_for, advice["ci-1"].release_at) == (
        300,
        look + timedelta(minutes=5),
    )
    assert advice["ci-2"].release


def test_a_create_retried_returns_the_machine_made_elsewhere(span: Span) -> None:
    provider = span.provider()
    span.out_of_stock(FSN1, NBG1)
    first = provider.create(autoscaler_create(provider, "ci-1"))
    span.out_of_stock()  # fsn1 has stock again: a retry must not make a second ci-1 there

    again = provider.create(autoscaler_create(provider, "ci-1"))

    assert first.machine is not None
    assert again.ok
    assert again.machine is not None
    assert again.machine.id == first.machine.id
    assert span.live()["hetzner"] == []


def test_a_one_cloud_pool_beside_it_is_todays_pool(span: Span) -> None:
    provider = span.provider()

    made = provider.create(MachineSpec("lab-1", "cx23", "fsn1", "", "lab")).machine

    assert made is not None
    assert made.cloud == "hetzner"
    assert made.id.isdigit()
    assert [m.id for m in provider.machines("lab")] == [made.id]
    assert provider.pool("lab").places == ()
    assert provider.delete(made.id)


def test_places_of_two_architectures_are_refused_naming_the_place(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    amd64 = Place(cloud="ec2", machine_type="t3.micro", location="eu-central-1a")
    monkeypatch.setenv("ORCA_POOLS", pools_json(FSN1, amd64))
    provider = span.provider()

    created = provider.create(autoscaler_create(provider, "ci-1"))

    assert created.failed
    assert f"place {amd64} is amd64" in created.reason
    assert f"first place {FSN1} is arm64" in created.reason
    assert span.server_posts() == 0
    assert created.reason.startswith("ORCA_POOLS pool ci's place")
    checked = ("places", created.reason.removeprefix("ORCA_POOLS "))  # the key says where
    assert checked in provider.check_options(provider.pool(POOL))


def test_a_spec_at_no_place_of_its_pool_is_refused(span: Span) -> None:
    provider = span.provider()

    created = provider.create(MachineSpec("ci-1", "cax11", "hel1", "", POOL))

    assert created.failed
    assert "cax11 in hel1 is none of them" in created.reason


@pytest.mark.parametrize(
    ("places", "key", "says"),
    [
        ([{"cloud": "gce", "machineType": "n2", "location": "x"}], "places.0.cloud", "gce"),
        ([FSN1.model_dump(by_alias=True)] * 2, "places.1", "twice"),
        ([{**FSN1.model_dump(by_alias=True), "market": "spot"}], "places.0.market", "spot"),
    ],
)
def test_a_wrong_place_is_one_line_naming_its_key(
    span: Span, monkeypatch: pytest.MonkeyPatch, places: list[object], key: str, says: str
) -> None:
    monkeypatch.setenv("ORCA_POOLS", json.dumps([{"name": "ci", "places": places}], default=str))

    with pytest.raises(SettingsError) as raised:
        Provider.of("hetzner", OWNER)

    message = str(raised.value)
    assert "\n" not in message
    assert f"item 1: {key}:" in message
    assert says in message


def test_a_cloud_without_its_settings_is_one_line_naming_the_variable_and_the_place(
    span: Span, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ORCA_EC2_SUBNETS")

    with pytest.raises(SettingsError) as raised:
        Provider.of("hetzner", OWNER)

    message = str(raised.value)
    assert "\n" not in message
    assert "ORCA_EC2_SUBNETS" in message
    assert f"place {EC2}" in message


def test_a_report_over_two_owners_lists_each_owners_machines_on_both_clouds(span: Span) -> None:
    prod, staging = span.provider(), span.provider("staging")
    assert prod.create(autoscaler_create(prod, "ci-1")).ok
    span.out_of_stock(FSN1, NBG1)
    assert staging.create(autoscaler_create(staging, "ci-2")).ok

    listed = prod.listed_with([staging])

    assert {o: [(m.name, m.cloud) for m in ms] for o, ms in listed.items()} == {
        OWNER: [("ci-1", "hetzner")],
        "staging": [("ci-2", "ec2")],
    }


@pytest.fixture
def on_both(span: Span, monkeypatch: pytest.MonkeyPatch) -> list[Machine]:
    """Pool ``ci`` of Hetzner's fsn1 and EC2's spot place (moto prices spot): ci-1 made on
    Hetzner, ci-2 on EC2 once fsn1 is out; the pool's machines as listed."""
    monkeypatch.setenv("ORCA_POOLS", pools_json(FSN1, EC2_SPOT))
    provider = span.provider()
    assert provider.create(autoscaler_create(provider, "ci-1")).ok
    span.out_of_stock(FSN1)
    assert provider.create(autoscaler_create(provider, "ci-2")).ok
    machines = provider.machines(POOL)
    assert [m.cloud for m in machines] == ["hetzner", "ec2"]
    return machines


def test_committed_on_two_clouds_is_their_sum_in_the_rates_unit(
    on_both: list[Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", "EUR=1,USD=0.5")
    provider = Provider.of("hetzner", OWNER)
    on_hetzner, on_ec2 = on_both
    assert on_ec2.created is not None
    now = on_ec2.created  # within EC2's first minute, which is billed whatever happens

    committed = provider.committed(on_both, now)

    eur = provider.on("hetzner").committed([on_hetzner], now)
    usd = provider.on("ec2").committed([on_ec2], now)
    assert eur is not None
    assert eur > 0
    assert usd is not None
    assert usd > 0
    assert committed == eur + usd * Decimal("0.5")


@pytest.mark.parametrize("rates", ["", "EUR=1"])
def test_committed_on_two_clouds_without_a_rate_for_each_currency_is_none(
    on_both: list[Machine], monkeypatch: pytest.MonkeyPatch, rates: str
) -> None:
    monkeypatch.setenv("ORCA_EXCHANGE_RATES", rates)

    assert Provider.of("hetzner", OWNER).committed(on_both) is None
