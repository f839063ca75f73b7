"""A stack whose pool spans Hetzner (the emulator, the official hcloud plugin) and EC2 (moto's
server, the aws stand-in), through the CLI an operator runs and the runtime an autoscaler
builds from the stack: with no cax11 in Hetzner's two places, ``up`` makes the stack's
machine on EC2 and the autoscaler's next create, unchanged, gets one there too; stock back,
a later ``up`` leaves the stack's machine where it is while the autoscaler's next machine is
made at the first place again; ``destroy`` removes every machine on both clouds."""

from __future__ import annotations

import pytest

from machines import MachineSpec, automation
from machines.automation.diff import is_default_provider
from machines.automation.state import resources
from machines.cli.exits import ExitCode
from testkit import moto_server
from testkit.commands import machines_cli
from testkit.engine_run import engine_counts
from testkit.engine_stacks import SPAN_STACK
from testkit.fault_proxy import Fault, FaultProxy

pytestmark = pytest.mark.engine

OWNER = "prod"
HETZNER_PLACES = [
    {"server_type": "cax11", "location": "fsn1"},
    {"server_type": "cax11", "location": "nbg1"},
]


def autoscaler_spec(name: str) -> MachineSpec:
    """What docs/runtime.md's autoscaler asks of pool arm: its own type and location."""
    pool = automation.provider(SPAN_STACK).pool("arm")
    return MachineSpec(
        name=name, machine_type=pool.machine_type, location=pool.location, pool="arm"
    )


def hetzner_servers(span_deployment) -> dict[str, str]:
    """Owner prod's servers on the emulator, by name, with their location."""
    servers = span_deployment.hcloud.servers.get_all(label_selector=f"orca-owner={OWNER}")
    return {s.name: s.location.name for s in servers}


def ec2_instances(span_deployment) -> dict[str, dict[str, str]]:
    """Owner prod's live instances on moto, by Name tag, with their tags."""
    live = moto_server.live_instances(span_deployment.moto.url, OWNER)
    return {
        name: {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
        for name, instance in live.items()
    }


def test_a_first_preview_counts_what_the_engine_counts(span_deployment):
    """The stack itself is a change, and neither cloud's default provider is one: the
    engine does not count its own steps (the CLI said 2 more, one per plugin, than the
    engine's own summary printed on the same run)."""
    done = machines_cli("preview", SPAN_STACK)

    assert done.returncode == ExitCode.CHANGES, done.stderr
    counts = engine_counts(done.stderr)
    assert counts["create"] > 0
    summary = ", ".join(f"{n} to {op}" for op, n in counts.items())
    assert done.stdout.splitlines()[-1] == f"stack span: {summary}"


def test_an_operator_s_runtime_variables_left_exported_are_not_the_stack_s(
    span_deployment, monkeypatch
):
    """After ``eval "$(orca-machines env other)"`` the shell holds another stack's
    settings: an amd64 AMI (``ORCA_EC2_IMAGE``) and its pools. Pool arm's EC2 place is
    arm64 and the stack names no image (Canonical's Ubuntu, which ``up`` boots): the check
    reads neither, so the preview goes to the engine."""
    monkeypatch.setenv("ORCA_EC2_IMAGE", moto_server.NEW_AMD64)
    monkeypatch.setenv("ORCA_POOLS", '[{"name": "arm", "machineType": "cx23", "location": "ash"}]')

    done = machines_cli("preview", SPAN_STACK, "-q")

    assert done.returncode == ExitCode.CHANGES, done.stderr
    assert done.stderr == ""


def test_a_pool_spanning_both_clouds_through_up_the_autoscaler_and_destroy(span_deployment):
    span_deployment.emulator.control.set_stock(HETZNER_PLACES)

    done = machines_cli("up", SPAN_STACK)

    assert done.returncode == 0, done.stderr
    instances = ec2_instances(span_deployment)
    assert instances["prod-arm-1.stack"]["orca-managed-by"] == "pulumi"
    assert instances["prod-arm-1.stack"]["orca-pool"] == "arm"
    assert set(hetzner_servers(span_deployment)) == {"prod-x86-1.stack"}

    provider = automation.provider(SPAN_STACK)
    made = provider.create(autoscaler_spec("arm-a1"))
    assert made.ok, made.reason
    assert made.machine is not None
    assert made.machine.cloud == "ec2"
    assert made.machine.id.startswith("ec2:i-")
    assert ec2_instances(span_deployment)["arm-a1"]["orca-owner"] == OWNER
    listed = {m.name: m.cloud for m in provider.machines("arm")}
    assert listed == {"prod-arm-1.stack": "ec2", "arm-a1": "ec2"}

    span_deployment.emulator.control.set_stock([])
    again = machines_cli("up", SPAN_STACK)

    assert again.returncode == 0, again.stderr
    assert "prod-arm-1.stack" in ec2_instances(span_deployment)
    assert set(hetzner_servers(span_deployment)) == {"prod-x86-1.stack"}
    back = automation.provider(SPAN_STACK).create(autoscaler_spec("arm-a2"))
    assert back.machine is not None, back.reason
    assert (back.machine.cloud, back.machine.location) == ("hetzner", "fsn1")

    gone = machines_cli("destroy", SPAN_STACK, "--yes")

    assert gone.returncode == 0, gone.stderr
    assert ec2_instances(span_deployment) == {}
    assert hetzner_servers(span_deployment) == {}


EC2_FIRST = [
    {"cloud": "ec2", "machineType": "t4g.small", "location": "eu-central-1a"},
    {"cloud": "hetzner", "machineType": "cax11", "location": "fsn1"},
]


def test_an_up_refused_for_want_of_capacity_goes_on_at_the_pool_s_next_place(span_deployment):
    """EC2 tells no stock before a create (moto never runs out: the fault proxy answers
    RunInstances with InsufficientInstanceCapacity): up runs again past the refused place."""
    moto = span_deployment.moto.url
    with FaultProxy(moto).serving() as proxy:
        automation.set_config(
            SPAN_STACK,
            {
                "aws:endpoints": [
                    {"ec2": proxy.url, "iam": moto, "sts": moto, "sqs": moto, "events": moto}
                ],
                "orca-machines:pools": [{"name": "arm", "size": 1, "places": EC2_FIRST}],
            },
        )
        proxy.set_faults(
            Fault("error", "RunInstances", status=500, code="InsufficientInstanceCapacity")
        )

        done = machines_cli("up", SPAN_STACK, "-q")

        assert done.returncode == 0, done.stderr
        # -q hides the engine's progress, never the up's own line on stderr
        assert (
            "stack span: pool arm: ec2 t4g.small in eu-central-1a has no stock now; up goes on "
            "with the pool's next place" in done.stderr.splitlines()
        )
        assert hetzner_servers(span_deployment) == {"prod-arm-1.stack": "fsn1"}
        assert ec2_instances(span_deployment) == {}
        # what the up made in all, the refused run's steps too: every resource of the state
        # (the stack's own too, the engine's default providers not), and where it put the
        # pool's new machine
        made = [
            r
            for r in resources(automation.select(SPAN_STACK).export_stack().deployment)
            if not is_default_provider(str(r["type"]), str(r["urn"]).rpartition("::")[2])
        ]
        assert done.stdout.splitlines() == [
            "stack span: machines: 1 created (pool arm: 1 at hetzner cax11 in fsn1), 0 deleted; "
            f"resources in all: {len(made)} created, 0 updated, 0 replaced, 0 deleted"
        ]

        span_deployment.emulator.control.set_stock([{"server_type": "cax11", "location": "fsn1"}])
        automation.set_config(
            SPAN_STACK, {"orca-machines:pools": [{"name": "arm", "size": 2, "places": EC2_FIRST}]}
        )
        refused = machines_cli("up", SPAN_STACK)

        assert refused.returncode == ExitCode.NO_STOCK, refused.stderr
        assert (
            "stack span: up stopped: ec2 t4g.small in eu-central-1a has no stock for pool arm "
            "now, and no other place of the pool has stock as far as its clouds say"
            in refused.stderr
        )
        assert hetzner_servers(span_deployment) == {"prod-arm-1.stack": "fsn1"}

        gone = machines_cli("destroy", SPAN_STACK, "--yes")
        assert gone.returncode == 0, gone.stderr
        assert hetzner_servers(span_deployment) == {}
        span_deployment.emulator.control.set_stock([])
        automation.set_config(
            SPAN_STACK,
            {
                "aws:endpoints": [
                    {"ec2": moto, "iam": moto, "sts": moto, "sqs": moto, "events": moto}
                ]
            },
        )


def test_an_up_refused_for_an_account_at_its_limit_goes_on_at_the_pool_s_next_place(
    span_deployment,
):
    """A full account is not here, not now for every place on that cloud (EC2's on-demand
    quota, which moto never enforces: the fault proxy answers VcpuLimitExceeded)."""
    moto = span_deployment.moto.url
    with FaultProxy(moto).serving() as proxy:
        automation.set_config(
            SPAN_STACK,
            {
                "aws:endpoints": [{"ec2": proxy.url, "iam": moto, "sts": moto}],
                "orca-machines:pools": [{"name": "arm", "size": 1, "places": EC2_FIRST}],
            },
        )
        proxy.set_faults(Fault("error", "RunInstances", status=400, code="VcpuLimitExceeded"))

        done = machines_cli("up", SPAN_STACK)

        assert done.returncode == 0, done.stderr
        assert (
            "stack span: pool arm: ec2 t4g.small in eu-central-1a is on a cloud whose account is "
            "at its limit (VcpuLimitExceeded); up goes on with the pool's next place"
            in done.stdout
            + done.stderr
        )
        assert hetzner_servers(span_deployment) == {"prod-arm-1.stack": "fsn1"}
        assert ec2_instances(span_deployment) == {}

        gone = machines_cli("destroy", SPAN_STACK, "--yes")
        assert gone.returncode == 0, gone.stderr
        automation.set_config(
            SPAN_STACK, {"aws:endpoints": [{"ec2": moto, "iam": moto, "sts": moto}]}
        )


def test_a_preview_warns_when_no_place_of_a_pool_has_stock(span_deployment):
    span_deployment.emulator.control.set_stock(HETZNER_PLACES)
    hetzner_only = [
        {"cloud": "hetzner", "machineType": "cax11", "location": "fsn1"},
        {"cloud": "hetzner", "machineType": "cax11", "location": "nbg1"},
    ]
    automation.set_config(
        SPAN_STACK, {"orca-machines:pools": [{"name": "arm", "size": 1, "places": hetzner_only}]}
    )

    done = machines_cli("preview", SPAN_STACK)

    assert done.returncode == ExitCode.CHANGES, done.stderr
    assert (
        "stack span: warning: pool arm: no place has stock as far as its clouds say "
        "(hetzner cax11 in fsn1: " in done.stdout
    )
    assert "new machines go to its first place, hetzner cax11 in fsn1" in done.stdout


@pytest.mark.parametrize(
    ("place", "line"),
    [
        (
            {"cloud": "hetzner", "machineType": "cax11", "location": "ash"},
            "stack span: pools[0].places[1].location: pool arm: ",
        ),
        (
            {"cloud": "ec2", "machineType": "t3.small", "location": "eu-central-1a"},
            "stack span: pools[0].places: pool arm's place ec2 t3.small in eu-central-1a is "
            "amd64, but its first place hetzner cax11 in fsn1 is arm64",
        ),
    ],
    ids=["a type its cloud does not sell there", "two architectures"],
)
def test_a_place_the_clouds_refuse_is_one_line_before_the_engine_starts(
    span_deployment, place, line
):
    first = {"cloud": "hetzner", "machineType": "cax11", "location": "fsn1"}
    automation.set_config(
        SPAN_STACK,
        {"orca-machines:pools": [{"name": "arm", "size": 1, "places": [first, place]}]},
    )

    done = machines_cli("preview", SPAN_STACK)

    assert done.returncode == ExitCode.ERROR, done.stderr
    assert line in done.stderr
    assert "Traceback" not in done.stderr
