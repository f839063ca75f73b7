"""A pool spanning the third cloud (``testkit.fake_cloud``) and Hetzner: the fake cloud's ids
are numbers as Hetzner's are, so only the ``<kind>:`` prefix of a machine off the home cloud
tells a delete where to go."""

from __future__ import annotations

from machines import MachineSpec, Provider
from machines.runtime.span import SpanningProvider
from testkit.fake_cloud import Store
from testkit.span import FAKE_PLACES
from testkit.specs import OWNER

FAKE, HETZNER = FAKE_PLACES


def spec(name: str) -> MachineSpec:
    return MachineSpec(name, FAKE.machine_type, FAKE.location, "", "ci")


def test_the_next_place_is_on_another_cloud_and_ids_say_which(fake_span: Store) -> None:
    provider = Provider.of("hetzner", OWNER)
    assert isinstance(provider, SpanningProvider)
    on_fake = provider.create(spec("ci-1")).machine
    fake_span.sell_out(FAKE.machine_type, FAKE.location)

    on_hetzner = provider.create(spec("ci-2"))

    assert on_fake is not None
    assert on_hetzner.machine is not None
    assert on_fake.cloud == "fake"
    assert on_fake.id == f"fake:{fake_span.live()[0]}"
    assert on_hetzner.machine.cloud == "hetzner"
    assert on_hetzner.machine.id.isdigit()
    assert str(FAKE) in on_hetzner.passed_over[0]
    assert [m.id for m in provider.machines("ci")] == [on_fake.id, on_hetzner.machine.id]


def test_a_bare_number_is_the_home_clouds_id_and_a_prefixed_one_the_other(
    fake_span: Store,
) -> None:
    provider = Provider.of("hetzner", OWNER)
    made = provider.create(spec("ci-1")).machine
    assert made is not None
    bare = made.id.removeprefix("fake:")

    assert provider.delete(bare)  # Hetzner has no server of that number: gone already
    assert fake_span.live() == [bare]
    assert provider.delete(made.id)
    assert fake_span.live() == []
