"""The README's main job on the embedded default: the Hetzner emulator.

Starts the emulator, then does what an autoscaler does through the public API only:
create a pool's machines, list them, delete them.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from emulator.process import running_emulator
from machines import MachineSpec, Provider


def main() -> int:
    token = secrets.token_hex(32)
    with running_emulator(token) as emulator:
        print(f"emulator: {emulator.url}")
        os.environ.update({"HCLOUD_TOKEN": token, "HCLOUD_ENDPOINT": emulator.url})
        provider = Provider.of("hetzner", owner="demo")
        for machine_type in ("cx22", "cax11"):
            print(f"arch({machine_type}) = {provider.arch(machine_type)}")
        for n, machine_type in enumerate(("cx22", "cax11", "cx22"), start=1):
            created = provider.create(
                MachineSpec(
                    name=f"demo-ci-{n}",
                    machine_type=machine_type,
                    location="fsn1",
                    pool="ci",
                    user_data="#cloud-config\n",
                )
            )
            print(f"create demo-ci-{n}: {created.outcome} {created.reason}".rstrip())
        emulator.control.set_stock([{"server_type": "cax11", "location": "nbg1"}])
        created = provider.create(
            MachineSpec(name="demo-ci-4", machine_type="cax11", location="nbg1", pool="ci")
        )
        print(f"create demo-ci-4 in nbg1 (out of stock there): {created.outcome}: {created.reason}")
        machines = provider.machines("ci")
        print(f"machines('ci'): {len(machines)}")
        for machine in machines:
            print(
                f"  {machine.id:>4} {machine.name:<10} {machine.status:<9} "
                f"{machine.machine_type:<6} {machine.location:<5} {machine.address}"
            )
        for machine in machines:
            provider.delete(machine.id)
        print(f"deleted {len(machines)}; machines('ci') now: {len(provider.machines('ci'))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
