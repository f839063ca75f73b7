"""The EC2 part of the demo: the EC2 example stack on moto's server, start to finish.

1. starts moto's server on a free loopback port and makes what an account already has there:
   a VPC with a subnet in each of two zones, and a managed policy;
2. brings the EC2 example stack (``stacks/Pulumi.ec2-example.yaml``, as a stack ``moto``
   pointed at that server) up through the Pulumi engine and the stand-in aws plugin;
3. lists its pools through the runtime API, configured by the stack (``automation.provider``);
4. previews a size change (pool arm: 2 -> 3) without applying it;
5. does what an autoscaler does with the runtime API: create, list and delete instances;
6. destroys the stack and shows that nothing is left in moto.

Everything runs on a throwaway copy of the project with its own state in a temporary
directory. Needs the engine (``scripts/install-pulumi``).
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machines import MachinesError, MachineSpec, Provider, automation
from testkit import moto_server

STACK = "moto"


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def quiet(_line: str) -> None:
    """Keep the engine's progress lines out of the demo's output."""


def show_pools(provider: Provider, pools: list[str]) -> None:
    for pool in pools:
        machines = provider.machines(pool)
        print(f"machines({pool!r}): {len(machines)}")
        for machine in machines:
            print(
                f"  {machine.id:<20} {machine.name:<11} {machine.status:<8} "
                f"{machine.machine_type:<9} {machine.location:<13} {machine.address}"
            )


def runtime_api(provider: Provider) -> None:
    """What an autoscaler does: create a pool's instances, list them, delete them."""
    for machine_type in ("t3.micro", "t4g.small"):
        print(f"arch({machine_type}) = {provider.arch(machine_type)}")
    for n, (machine_type, zone) in enumerate(
        (("t3.micro", "eu-central-1a"), ("t4g.small", "eu-central-1b")), start=1
    ):
        created = provider.create(
            MachineSpec(
                name=f"ci-a{n}",
                machine_type=machine_type,
                location=zone,
                pool="ci",
                user_data="#cloud-config\n",
            )
        )
        print(f"create ci-a{n}: {created.outcome} {created.reason}".rstrip())
    show_pools(provider, ["ci"])
    machines = provider.machines("ci")
    for machine in machines:
        provider.delete(machine.id)
    print(f"deleted {len(machines)}; machines('ci') now: {len(provider.machines('ci'))}")


def configure(project: Path, url: str) -> None:
    """The example stack as stack ``moto``: moto's endpoints, its network, a policy it has."""
    stacks = project / "stacks"
    shutil.copy(stacks / "Pulumi.ec2-example.yaml", stacks / f"Pulumi.{STACK}.yaml")
    network = moto_server.build_network(url)
    policy = moto_server.managed_policy(url)
    group = {
        "name": "pools",
        "vpc": network.vpc,
        "ingress": [{"protocol": "tcp", "port": "22", "sourceIps": ["203.0.113.0/24"]}],
    }
    automation.set_config(
        STACK,
        {
            "aws:endpoints": [{"ec2": url, "iam": url, "sts": url}],
            "orca-machines:subnets": network.subnets,
            "orca-machines:securityGroup": group,
            "orca-machines:instanceProfile": {"name": "workers", "policies": [policy]},
        },
    )
    print(f"network: {network.vpc}, subnets {network.subnets}")


def left_in_moto(url: str) -> str:
    ec2 = moto_server.client(url)
    live = [
        i
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] != "terminated"
    ]
    groups = [
        g for g in ec2.describe_security_groups()["SecurityGroups"] if g["GroupName"] != "default"
    ]
    iam = moto_server.client(url, "iam")
    roles, profiles = iam.list_roles()["Roles"], iam.list_instance_profiles()["InstanceProfiles"]
    return (
        f"{len(live)} instances, {len(groups)} security groups, {len(roles)} roles, "
        f"{len(profiles)} instance profiles"
    )


def demo(workdir: Path) -> None:
    project = automation.copy_project(workdir / "project")
    state = workdir / "state"
    state.mkdir()
    os.environ.update(
        {
            automation.ORCA_PULUMI_PROJECT: str(project),
            automation.PULUMI_BACKEND_URL: state.as_uri(),
            automation.PULUMI_CONFIG_PASSPHRASE: secrets.token_hex(16),
            **moto_server.CREDENTIALS,
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        }
    )
    for name in (*moto_server.ISOLATED, "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_REGION"):
        os.environ.pop(name, None)
    print(f"project copy: {project}\nstate:        {state.as_uri()}")

    step("start moto's server, with an account's network and a managed policy")
    with moto_server.running(workdir) as moto:
        print(f"moto: {moto.url}")
        configure(project, moto.url)
        try:
            step(f"pulumi up: stack {STACK}, the EC2 example (the engine's progress follows)")
            done = automation.up(STACK)
            print(f"stack {STACK}: {len(done.changes)} resources created")

            step(f"the runtime API, configured by the stack: automation.provider({STACK!r})")
            provider = automation.provider(STACK)
            print(provider)
            show_pools(provider, ["arm", "x86"])

            step("preview a size change, pool arm 2 -> 3, without applying it")
            automation.set_config(STACK, {"orca-machines:pools[0].size": 3}, path=True)
            print(automation.preview(STACK, on_output=quiet).markdown())
            automation.set_config(STACK, {"orca-machines:pools[0].size": 2}, path=True)

            step("what an autoscaler does: create, list and delete instances of pool ci")
            runtime_api(provider)
        finally:
            step(f"pulumi destroy: stack {STACK}")
            done = automation.destroy(STACK, on_output=quiet)
            print(f"stack {STACK}: {done.counts['delete']} resources deleted")
            print(f"left in moto: {left_in_moto(moto.url)}")


def main() -> int:
    try:
        with tempfile.TemporaryDirectory(prefix="orca-demo-ec2-") as workdir:
            demo(Path(workdir))
    except (MachinesError, RuntimeError) as error:
        print(f"demo-ec2: error: {error}", file=sys.stderr)
        return 1
    print("\ndone: the stack is destroyed and its state thrown away; rerun at will")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
