"""A stack is checked before the engine starts: one line naming the stack, the key and the
fix, no traceback, whether the engine's progress is shown or not."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hcloud import Client
from hcloud.images import Image
from hcloud.networks import NetworkSubnet
from hcloud.placement_groups import PlacementGroup
from hcloud.server_types import ServerType

from emulator.process import PROJECT_ROOT, Emulator
from machines import Provider, automation
from machines.automation import checks, engine
from machines.automation.status import status as stack_status
from machines.cli.exits import ExitCode
from machines.program.config.problems import StackConfigError
from machines.runtime.errors import SettingsError
from testkit.specs import spec

ENGINE_COMMAND = engine.engine_command


def no_engine(*_args: object, **_kwargs: object) -> object:
    raise AssertionError("the engine started before the stack was checked")


def edit_stack(project: Path, stack: str, **changes: object) -> None:
    """Set top-level keys of ``stack``'s file (``pools`` edits go through ``pool``)."""
    path = project / "stacks" / f"Pulumi.{stack}.yaml"
    data = yaml.safe_load(path.read_text()) if path.exists() else {"config": {}}
    data["config"].update(changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def pools(project: Path, **first: object) -> list[dict[str, object]]:
    """The local stack's pools, the first one changed."""
    data = yaml.safe_load((project / "stacks" / "Pulumi.local.yaml").read_text())
    listed: list[dict[str, object]] = data["config"]["orca-machines:pools"]
    listed[0] = {**listed[0], **first}
    return listed


@pytest.fixture
def project(tmp_path: Path, emulator: Emulator, hetzner_env, monkeypatch) -> Path:
    """A project copy whose local stack points at the emulator; the engine must not start."""
    copy = automation.copy_project(tmp_path / "project")
    edit_stack(copy, "local", **{"hcloud:endpoint": emulator.url})
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(copy))
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "state").as_uri())
    monkeypatch.setattr(engine, "engine_command", no_engine)
    monkeypatch.setattr(automation.stacks, "engine_command", no_engine)
    return copy


def test_a_bad_stack_file_fails_before_the_engine_starts(project: Path) -> None:
    edit_stack(project, "local", **{"orca-machines:pools": pools(project, size=-1)})

    with pytest.raises(StackConfigError) as failed:
        automation.preview("local")

    assert str(failed.value) == "stack local: pools[0].size: must be >= 0"


def test_a_type_the_cloud_lacks_names_the_stack_the_pool_and_the_key(project: Path) -> None:
    edit_stack(project, "local", **{"orca-machines:pools": pools(project, machineType="cx32")})

    with pytest.raises(StackConfigError) as failed:
        automation.up("local")

    assert str(failed.value).startswith(
        "stack local: pools[0].machineType: pool x86: Hetzner has no server type 'cx32': "
        "use one of "
    )
    assert "cx33" in str(failed.value)


def test_a_location_the_type_is_not_sold_in_names_the_location_key(project: Path) -> None:
    edit_stack(project, "local", **{"orca-machines:pools": pools(project, location="mars1")})

    with pytest.raises(StackConfigError) as failed:
        automation.preview("local")

    assert str(failed.value).startswith(
        "stack local: pools[0].location: pool x86: Hetzner does not offer cx23 in 'mars1': "
        "it is sold in "
    )


def test_a_token_hetzner_never_issues_fails_before_the_engine_starts(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HCLOUD_TOKEN", "orca-test-token")

    with pytest.raises(SettingsError) as failed:
        automation.preview("local")

    assert str(failed.value).startswith(
        "stack local: HCLOUD_TOKEN has 15 characters, but a Hetzner Cloud API token has "
        "exactly 64: "
    )
    assert "orca-test-token" not in str(failed.value)


def test_a_missing_token_names_the_variable_and_the_stack(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HCLOUD_TOKEN")

    with pytest.raises(SettingsError, match=r"^stack local: HCLOUD_TOKEN is not set: "):
        automation.preview("local")


def test_a_stack_other_than_local_is_checked_then_needs_its_passphrase(
    project: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit_stack(project, "prod", **{
        "hcloud:endpoint": emulator.url,
        "orca-machines:provider": "hetzner",
        "orca-machines:pools": pools(project),
    })  # fmt: skip
    monkeypatch.setattr(automation.stacks, "engine_command", ENGINE_COMMAND)
    monkeypatch.setattr(engine, "engine_command", ENGINE_COMMAND)

    with pytest.raises(SettingsError, match="PULUMI_CONFIG_PASSPHRASE is not set: stack prod"):
        automation.preview("prod")


@pytest.mark.parametrize("quiet", [[], ["-q"]], ids=["progress shown", "quiet"])
def test_the_cli_says_it_in_one_line_without_a_traceback(project: Path, run_cli, quiet) -> None:
    edit_stack(project, "local", **{"orca-machines:pools": pools(project, machineType="cx32")})

    done = run_cli("preview", "local", *quiet)

    assert done.returncode == ExitCode.ERROR
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(
        "orca-machines: error: stack local: pools[0].machineType: pool x86: "
        "Hetzner has no server type 'cx32'"
    )


@pytest.fixture
def ec2_project(tmp_path: Path, ec2_world, moto, monkeypatch) -> Path:
    """A project copy whose ``moto`` stack is the EC2 example at moto's server, creating its
    security group and instance profile as the example does; the engine must not start."""
    copy = automation.copy_project(tmp_path / "project")
    stacks = copy / "stacks"
    example = yaml.safe_load((stacks / "Pulumi.ec2-example.yaml").read_text())
    example["config"].update({
        "aws:endpoints": [{"ec2": moto.url, "iam": moto.url, "sts": moto.url}],
        "orca-machines:subnets": ec2_world.subnets,
    })  # fmt: skip
    (stacks / "Pulumi.moto.yaml").write_text(yaml.safe_dump(example, sort_keys=False))
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setattr(engine, "engine_command", no_engine)
    return copy


def test_an_ec2_stack_that_creates_its_group_is_checked_against_the_catalogue(ec2_project):
    deployment = checks.check("moto", ec2_project)
    assert deployment is not None
    assert [p.machine_type for p in deployment.pools] == ["t4g.small", "t3.small"]

    path = ec2_project / "stacks" / "Pulumi.moto.yaml"
    data = yaml.safe_load(path.read_text())
    data["config"]["orca-machines:pools"][1]["machineType"] = "t9.nope"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(StackConfigError) as failed:
        checks.check("moto", ec2_project)
    assert str(failed.value).startswith(
        "stack moto: pools[1].machineType: pool x86: EC2 has no instance type 't9.nope'"
    )


def test_sigterm_while_the_stack_is_checked_is_one_line_and_143(project, emulator):
    emulator.control.reset_requests()
    emulator.control.set_faults(
        [{"kind": "delay", "method": "GET", "path": "/v1/server_types", "seconds": 30.0}]
    )
    try:
        run = subprocess.Popen(
            [sys.executable, "-m", "machines", "preview", "local"],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not emulator.control.requests().routes.get("GET /v1/server_types"):
            assert time.monotonic() < deadline, "the check never read the catalogue"
            assert run.poll() is None, run.communicate()
            time.sleep(0.1)
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=120)
    finally:
        emulator.control.clear_faults()
    assert (run.returncode, out, err) == (
        ExitCode.TERMINATED,
        "",
        "orca-machines: error: terminated\n",
    )


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"network": "nope", "ipv4": False},
            "stack local: pools[0].hetzner.network: pool x86: hetzner.network 'nope' is no "
            "network of the project",
        ),
        (
            {"placementGroup": "nope"},
            "stack local: pools[0].hetzner.placementGroup: pool x86: hetzner.placementGroup "
            "'nope' is no placement group",
        ),
        (
            {"imageSelector": "role=arm-only"},
            "stack local: pools[0].hetzner.imageSelector: pool x86: hetzner.imageSelector "
            "'role=arm-only' matches no snapshot for amd64 (there is one for arm64 only)",
        ),
        (
            {"image": "no-such-image"},
            "stack local: pools[0].hetzner.image: Hetzner has no image 'no-such-image' for amd64",
        ),
    ],
)
def test_an_unknown_network_group_or_image_fails_before_the_engine_starts(
    project: Path, emulator: Emulator, options: dict[str, object], expected: str
) -> None:
    emulator.control.add_image(architecture="arm", labels={"role": "arm-only"})
    edit_stack(project, "local", **{"orca-machines:pools": pools(project, hetzner=options, max=2)})

    with pytest.raises(StackConfigError) as failed:
        automation.preview("local")

    assert str(failed.value).startswith(expected)
    assert emulator.control.requests().get("POST /v1/servers") == 0


def test_a_network_and_group_the_stack_creates_are_not_looked_for(project: Path) -> None:
    edit_stack(
        project,
        "local",
        **{
            "orca-machines:networks": [{"name": "ci"}],
            "orca-machines:placementGroups": [{"name": "spread"}],
            "orca-machines:pools": pools(
                project,
                hetzner={"ipv4": False, "network": "ci", "placementGroup": "spread"},
                max=2,
            ),
        },
    )

    assert checks.check("local") is not None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"pool": {"hetzner": {"labels": {"team": "a" * 70}}}},
            "stack local: pools[0].hetzner.labels: the value of label 'team' has 70 characters, "
            "more than Hetzner's 63: shorten it",
        ),
        (
            {"pool": {"hetzner": {"imageSelector": "role=="}}},
            "stack local: pools[0].hetzner.imageSelector: 'role==' cannot be read as a label "
            "selector: term 'role==' has no value",
        ),
        (
            {
                "orca-machines:networks": [{"name": "ci", "zone": "us-east"}],
                "pool": {"hetzner": {"network": "ci"}},
            },
            "stack local: pools[0].hetzner.network: pool x86: network ci (networks[0]) has its "
            "subnet in network zone us-east, but location fsn1 is in eu-central: set "
            "networks[0].zone to eu-central",
        ),
        (
            {
                "orca-machines:networks": [
                    {"name": "ci", "ipRange": "8.0.0.0/16", "subnet": "8.0.1.0/24"}
                ],
                "pool": {"hetzner": {"network": "ci"}},
            },
            "stack local: networks[0]: ipRange 8.0.0.0/16 is not a private IPv4 range: Hetzner "
            "takes only RFC 1918 ranges",
        ),
        (
            {
                "orca-machines:networks": [
                    {"name": "ci", "ipRange": "10.0.0.0/28", "subnet": "10.0.0.0/30"}
                ]
            },
            "stack local: networks[0]: ipRange 10.0.0.0/28 is smaller than a /24",
        ),
    ],
)
def test_what_hetzner_refuses_of_labels_selectors_and_networks_fails_before_the_engine(
    project: Path, emulator: Emulator, changes: dict[str, object], expected: str
) -> None:
    """Hetzner would refuse each of these inside the engine, seconds in (a network in the
    wrong zone after the network and a server are made): the check says it first."""
    pool = changes.pop("pool", {})
    assert isinstance(pool, dict)
    edit_stack(project, "local", **changes, **{"orca-machines:pools": pools(project, **pool)})

    with pytest.raises(StackConfigError) as failed:
        automation.preview("local")

    assert str(failed.value).startswith(expected)
    assert not emulator.control.requests().get("POST /v1/networks")
    assert not emulator.control.requests().get("POST /v1/servers")


def test_an_existing_network_of_another_zone_fails_before_the_engine(
    project: Path, hcloud: Client
) -> None:
    hcloud.networks.create(
        name="east",
        ip_range="10.0.0.0/16",
        subnets=[NetworkSubnet(ip_range="10.0.1.0/24", network_zone="us-east", type="cloud")],
    )
    edit_stack(
        project, "local", **{"orca-machines:pools": pools(project, hetzner={"network": "east"})}
    )

    with pytest.raises(StackConfigError) as failed:
        checks.check("local")

    assert str(failed.value).startswith(
        "stack local: pools[0].hetzner.network: pool x86: hetzner.network 'east' has no subnet "
        "in network zone eu-central, which holds location fsn1"
    )


def test_a_spread_group_already_holding_ten_servers_fails_before_the_engine(
    project: Path, hcloud: Client
) -> None:
    group = hcloud.placement_groups.create(name="full", type=PlacementGroup.TYPE_SPREAD)
    for n in range(10):
        hcloud.servers.create(
            name=f"other-{n}",
            server_type=ServerType(name="cx23"),
            image=Image(name="ubuntu-24.04"),
            placement_group=group.placement_group,
        )
    edit_stack(
        project,
        "local",
        **{"orca-machines:pools": pools(project, hetzner={"placementGroup": "full"}, max=2)},
    )

    with pytest.raises(StackConfigError) as failed:
        checks.check("local")

    assert str(failed.value) == (
        "stack local: pools[0].hetzner.placementGroup: pool x86: hetzner.placementGroup 'full' "
        "already holds 10 servers not of this owner, and Hetzner puts at most 10 in a spread "
        "group: it is full, so use another placement group"
    )


def test_an_image_id_written_as_a_number_is_accepted(project: Path, emulator: Emulator) -> None:
    image = emulator.control.add_image(labels={"role": "ci"})
    edit_stack(
        project, "local", **{"orca-machines:pools": pools(project, hetzner={"image": image})}
    )
    text = (project / "stacks" / "Pulumi.local.yaml").read_text()
    assert f"image: {image}\n" in text

    deployment = checks.check("local")

    assert deployment is not None
    assert deployment.pools[0].options["hetzner"].model_dump()["image"] == str(image)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"rootVolume": {"size": 10}},
            "stack moto: pools[1].ec2.rootVolume.size: pool x86: ec2.rootVolume.size is 10 GiB, "
            "smaller than the 15 GiB snapshot of AMI",
        ),
        (
            {"image": "ami-0123456789abcdef0"},
            "stack moto: pools[1].ec2.image: pool x86: ec2.image ami-0123456789abcdef0 is no AMI",
        ),
        (
            {"imageOwner": "099720109477", "imageName": "nothing-*"},
            "stack moto: pools[1].ec2.imageName: pool x86: ec2.imageOwner 099720109477 has no AMI",
        ),
        (
            {"rootVolume": {"kmsKey": "alias/nope"}},
            "stack moto: pools[1].ec2.rootVolume.kmsKey: pool x86: ec2.rootVolume.kmsKey "
            "'alias/nope' is no KMS key in region",
        ),
        (
            {"rootVolume": {"type": "io1", "size": 30, "iops": 2000}},
            "stack moto: pools[1].ec2.rootVolume: iops 2000 is more than a 30 GiB io1 volume "
            "takes (50 per GiB: at most 1500): lower iops or raise size to 40 GiB",
        ),
        (
            {"rootVolume": {"type": "st1", "size": 100}},
            "stack moto: pools[1].ec2.rootVolume: type st1 cannot be a root volume",
        ),
        (
            {"rootVolume": {"iops": 1000}},
            "stack moto: pools[1].ec2.rootVolume: iops 1000 is outside what a gp3 volume takes",
        ),
    ],
)
def test_an_unknown_ami_or_a_small_volume_fails_before_the_engine_starts(
    ec2_project: Path, options: dict[str, object], expected: str
) -> None:
    path = ec2_project / "stacks" / "Pulumi.moto.yaml"
    data = yaml.safe_load(path.read_text())
    data["config"]["orca-machines:pools"][1]["ec2"] = options
    path.write_text(yaml.safe_dump(data, sort_keys=False))

    with pytest.raises(StackConfigError) as failed:
        checks.check("moto", ec2_project)

    assert str(failed.value).startswith(expected)


@pytest.mark.engine
def test_status_counts_the_primary_ipv4_and_says_what_an_ipv6_only_pool_saves(
    tmp_path: Path, emulator: Emulator, hetzner_env, monkeypatch
) -> None:
    """``status`` of a stack not brought up: its pools from the file, the autoscaler's
    machines listed, each priced with what its options cost (Hetzner bills the primary
    IPv4 apart from the server)."""
    copy = automation.copy_project(tmp_path / "project")
    options = {"ipv4": False}
    edit_stack(copy, "local", **{"hcloud:endpoint": emulator.url})
    edit_stack(copy, "local", **{"orca-machines:pools": pools(copy, hetzner=options, size=0)})
    monkeypatch.setenv("ORCA_PULUMI_PROJECT", str(copy))
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "state").as_uri())
    (tmp_path / "state").mkdir()
    deployment = checks.deployment_of("local")
    settings = deployment.runtime_env({})  # its pools; keys and firewall are not made
    provider = Provider.of("hetzner", deployment.owner, {**hetzner_env, **settings})
    for name, pool, machine_type in (
        ("x86-a1", "x86", "cx23"),
        ("x86-a2", "x86", "cx23"),
        ("arm-a1", "arm", "cax11"),
    ):
        made = provider.create(spec(name, machine_type=machine_type, location="fsn1", pool=pool))
        assert made.ok, made.reason

    status = stack_status("local")

    prices = provider.prices()
    ipv4 = prices.saving(provider.pool("x86"), "fsn1")
    assert ipv4 > 0
    [x86, arm] = status.pools
    assert x86.monthly == 2 * prices.monthly("cx23", "fsn1")
    assert arm.monthly == prices.monthly("cax11", "fsn1") + ipv4
    saving = [n for n in status.notes if n.startswith("pool x86: no primary IPv4 saves")]
    assert saving == [f"pool x86: no primary IPv4 saves {ipv4:.2f} EUR a month per machine "
                      f"({2 * ipv4:.2f} EUR for the 2 billed now)"]  # fmt: skip
