"""The pool contract on Hetzner, against the emulator, checked through the official client:
the stack's servers (``orca-managed-by=pulumi``) are told apart and never deleted, a pool's
max holds, a spot market is refused, and reaping takes only the autoscaler's."""

import pytest
from hcloud import Client
from hcloud.images import Image
from hcloud.server_types import ServerType

from emulator.process import Emulator
from machines import MachineSpec, Provider, SettingsError, StackMachineError
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from machines.runtime.reaping import reap
from testkit.specs import OWNER

STACK = {"orca": "pool", "orca-pool": "ci", "orca-owner": OWNER, "orca-managed-by": "pulumi"}


def spec(name: str, pool: str = "ci") -> MachineSpec:
    return MachineSpec(name=name, machine_type="cx23", location="fsn1", pool=pool)


def stack_server(hcloud: Client, name: str) -> int:
    """A server as the stack makes it: its name form and labels."""
    made = hcloud.servers.create(
        name=name,
        server_type=ServerType(name="cx23"),
        image=Image(name="ubuntu-24.04"),
        labels=STACK,
    )
    assert made.server.id is not None
    return made.server.id


def test_the_stacks_servers_are_told_apart(
    hetzner_provider: HetznerProvider, hcloud: Client
) -> None:
    provider = hetzner_provider
    stack_server(hcloud, f"{OWNER}-ci-1")
    assert provider.create(spec("ci-a1")).ok

    kinds = {m.name: m.managed_by for m in provider.machines("ci")}

    assert kinds == {f"{OWNER}-ci-1": "pulumi", "ci-a1": ""}


def test_delete_refuses_a_stack_server_in_one_request(
    hetzner_provider: HetznerProvider, hcloud: Client, emulator: Emulator
) -> None:
    provider = hetzner_provider
    kept = stack_server(hcloud, f"{OWNER}-ci-1")
    emulator.control.reset_requests()

    with pytest.raises(StackMachineError) as refused:
        provider.delete(str(kept))

    assert str(refused.value).startswith(
        f"server {kept} ({OWNER}-ci-1) is kept by the stack of owner '{OWNER}'"
    )
    assert "lower the size of pool ci in that stack" in str(refused.value)
    assert emulator.control.requests().total == 1
    assert hcloud.servers.get_by_id(kept).status != "deleting"


def test_a_pools_max_holds_and_frees_with_a_delete(
    hetzner_env: dict[str, str], hcloud: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=2,gpu=9")
    provider = Provider.of("hetzner", owner=OWNER)
    stack_server(hcloud, f"{OWNER}-ci-1")
    first = provider.create(spec("ci-a1"))
    assert first.machine is not None

    refused = provider.create(spec("ci-a2"))

    assert refused.failed
    assert refused.reason.startswith(
        f"pool ci has 2 machines, the max the stack of owner '{OWNER}' sets for it"
    )
    assert provider.delete(first.machine.id)
    assert provider.create(spec("ci-a2")).ok
    assert provider.create(spec("other-a1", pool="other")).ok


def test_a_malformed_pool_max_names_the_variable(
    hetzner_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=many")
    with pytest.raises(SettingsError, match="ORCA_POOL_MAX item 'ci=many' is not POOL=NUMBER"):
        Provider.of("hetzner", owner=OWNER)


@pytest.mark.parametrize("market", ["spot", "spot-then-on-demand"])
def test_a_spot_market_is_refused_on_hetzner_naming_the_variable_and_why(
    hetzner_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, market: str
) -> None:
    monkeypatch.setenv("ORCA_POOL_MARKET", f"ci={market}")
    with pytest.raises(
        SettingsError,
        match=f"ORCA_POOL_MARKET: pool ci asks for market {market}, but Hetzner Cloud has no "
        "spot market",
    ):
        Provider.of("hetzner", owner=OWNER)


def test_an_on_demand_market_is_hetzners_own(
    hetzner_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCA_POOL_MARKET", "ci=on-demand")
    assert Provider.of("hetzner", owner=OWNER).market("ci") == "on-demand"


def test_reaping_takes_only_the_autoscalers_servers_of_owner_and_pool(
    hetzner_provider: HetznerProvider, hcloud: Client
) -> None:
    provider = hetzner_provider
    stack_server(hcloud, f"{OWNER}-ci-1")
    assert provider.create(spec("ci-a1")).ok
    assert provider.create(spec("gpu-a1", pool="gpu")).ok
    assert Provider.of("hetzner", owner="other").create(spec("ci-b1")).ok

    reaped = reap(provider, "ci", poll=0.05)

    assert [m.name for m in reaped] == ["ci-a1"]
    live = {s.name for s in hcloud.servers.get_all() if s.status != "deleting"}
    assert live == {f"{OWNER}-ci-1", "gpu-a1", "ci-b1"}
