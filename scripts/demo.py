"""The README's main job: the local stack on the Hetzner emulator, start to finish.

1. starts the emulator on port 4080, where the local stack's ``hcloud:endpoint`` points;
2. brings the ``local`` stack up through the Pulumi engine (``machines.automation``);
3. lists its pools through the runtime API, configured by the stack (``automation.provider``);
4. previews a size change (pool x86: 2 -> 3) without applying it;
5. does what an autoscaler does with the runtime API: create, list and delete machines;
6. destroys the stack, so a rerun starts clean.

Everything runs on a throwaway copy of the project with its own state in a temporary
directory: your ``.pulumi-state`` and the committed stack files are never touched. Needs the
engine (``scripts/install-pulumi``).
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml
from hcloud import Client

from emulator.control import Control
from emulator.process import EmulatorStartError, running_emulator
from machines import MachinesError, MachineSpec, Provider, automation

PORT = 4080
STACK = "local"
KEY = "orca-machines:pools[1].userData"
"""Pool arm's user data, plain text in the local stack's file: the demo makes it a secret."""


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def port_is_free(port: int) -> bool:
    """True when the emulator can listen on ``port``; like it, ignore the last run's TIME_WAIT."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def quiet(_line: str) -> None:
    """Keep the engine's progress lines out of the demo's output."""


def explained(done: automation.Diff) -> str:
    """What ``up`` made: the machines, then each other kind of resource and how many."""
    machines = done.machines(past=True)
    others = Counter(
        c.type
        for c in done.changes
        if not any(c.name.startswith(f"{STACK}-{p.pool}-") for p in done.pools)
    )
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(others.items()))
    return f"{machines}; and {sum(others.values())} other resources: {kinds}"


def show_pools(provider: Provider, pools: list[str]) -> None:
    for pool in pools:
        machines = provider.machines(pool)
        print(f"machines({pool!r}): {len(machines)}")
        for machine in machines:
            print(
                f"  {machine.id:>4} {machine.name:<12} {machine.status:<9} "
                f"{machine.machine_type:<6} {machine.location:<5} {machine.address}"
            )


def runtime_api(provider: Provider, control: Control) -> None:
    """What an autoscaler does: create a pool's machines, list them, delete them."""
    for machine_type in ("cx23", "cax11"):
        print(f"arch({machine_type}) = {provider.arch(machine_type)}")
    for n, machine_type in enumerate(("cx23", "cax11", "cx23"), start=1):
        created = provider.create(
            MachineSpec(
                name=f"ci-a{n}",
                machine_type=machine_type,
                location="fsn1",
                pool="ci",
                user_data="#cloud-config\n",
            )
        )
        print(f"create ci-a{n}: {created.outcome} {created.reason}".rstrip())
    control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
    created = provider.create(
        MachineSpec(name="ci-a4", machine_type="cax11", location="nbg1", pool="ci")
    )
    print(f"create ci-a4 in nbg1 (out of stock there): {created.outcome}: {created.reason}")
    show_pools(provider, ["ci"])
    machines = provider.machines("ci")
    for machine in machines:
        provider.delete(machine.id)
    now = provider.machines("ci")
    deleting = sum(m.status == "deleting" for m in now)
    print(
        f"deleted {len(machines)}; machines('ci') now: {len(now)} ({deleting} deleting): a "
        "deleted machine is listed as deleting until the cloud has removed it, so an "
        "autoscaler counting its pool never makes a second one in its place"
    )


def demo(workdir: Path) -> None:
    project = automation.copy_project(workdir / "project")
    state = workdir / "state"
    state.mkdir()
    token = secrets.token_hex(32)
    os.environ.update(
        {
            automation.ORCA_PULUMI_PROJECT: str(project),
            automation.PULUMI_BACKEND_URL: state.as_uri(),
            "HCLOUD_TOKEN": token,
        }
    )
    print(f"project copy: {project}\nstate:        {state.as_uri()}")

    step(f"start the Hetzner emulator on port {PORT}")
    with running_emulator(token, "--port", str(PORT), "--boot-seconds", "0.2") as emulator:
        print(f"emulator: {emulator.url}")
        try:
            step(f"keep pool arm's user data encrypted: pulumi config set --secret --path {KEY}")
            pools = yaml.safe_load(automation.stack_file(STACK).read_text())["config"]
            user_data = pools["orca-machines:pools"][1]["userData"]
            automation.set_config(STACK, {KEY: user_data}, path=True, secret=True)
            print("set as a secret: the update history and the state never hold it in plain")

            step(f"pulumi up: stack {STACK} (the engine's progress follows)")
            done = automation.up(STACK)
            print(f"stack {STACK}: {explained(done)}")

            step("the runtime API, configured by the stack: automation.provider('local')")
            provider = automation.provider(STACK)
            print(provider)
            show_pools(provider, ["x86", "arm"])

            step("preview a size change, pool x86 2 -> 3, without applying it")
            automation.set_config(STACK, {"orca-machines:pools[0].size": 3}, path=True)
            print(automation.preview(STACK, on_output=quiet).markdown())
            automation.set_config(STACK, {"orca-machines:pools[0].size": 2}, path=True)
            print(f"back to size 2: {automation.preview(STACK, on_output=quiet).summary()}")

            step("what an autoscaler does: create, list and delete machines of pool ci")
            runtime_api(provider, emulator.control)
        finally:
            step(f"pulumi destroy: stack {STACK}")
            done = automation.destroy(STACK, on_output=quiet)
            print(
                f"stack {STACK}: {done.machines(past=True)}; {done.counts['delete']} resources "
                "deleted in all"
            )
            hcloud = Client(token=token, api_endpoint=emulator.url)
            left = [len(hcloud.servers.get_all()), len(hcloud.firewalls.get_all())]
            print(f"left in the emulator: {left[0]} servers, {left[1]} firewalls")


def main() -> int:
    if not port_is_free(PORT):
        print(
            f"demo: error: port {PORT} is taken; the local stack's hcloud:endpoint is "
            f"http://127.0.0.1:{PORT}/v1, so the emulator must listen there: stop what uses "
            "it and rerun",
            file=sys.stderr,
        )
        return 1
    try:
        with tempfile.TemporaryDirectory(prefix="orca-demo-") as workdir:
            demo(Path(workdir))
    except (MachinesError, EmulatorStartError) as error:
        print(f"demo: error: {error}", file=sys.stderr)
        return 1
    print("\ndone: the stack is destroyed and its state thrown away; rerun at will")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
