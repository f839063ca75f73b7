"""A stack's snapshot is read once per run: the CI comment counts its pools on the one the
preview was counted against, and the cloud is not listed again."""

from __future__ import annotations

from emulator.process import Emulator
from machines import MachineSpec
from machines.automation.diff import Diff
from machines.automation.pool_report import pool_changes
from machines.automation.snapshot import take
from machines.program.config.loader import load
from machines.program.config.stack_config import StackConfig
from machines.runtime.provider import Provider


def test_the_pools_of_the_ci_comment_are_counted_on_the_previews_snapshot(
    emulator: Emulator, hetzner_env: dict[str, str]
) -> None:
    pools = [{"name": "x86", "machineType": "cx23", "location": "fsn1", "size": 1}]
    config = {
        "orca-machines:provider": "hetzner",
        "hcloud:endpoint": emulator.url,
        "orca-machines:pools": pools,
    }
    deployment = load(StackConfig.from_stack_file(config), "prod")
    spec = MachineSpec(name="auto-x86-1", machine_type="cx23", location="fsn1", pool="x86")
    assert Provider.of("hetzner", "prod", hetzner_env).create(spec).ok
    snapshot = take("prod", deployment, {}, hetzner_env)
    emulator.control.reset_requests()

    counted = pool_changes(Diff(stack="prod"), snapshot, environ=hetzner_env)

    assert "GET /v1/servers" not in emulator.control.requests().routes
    [x86] = counted.pools
    assert (x86.pool, x86.autoscaler) == ("x86", 1)
    assert x86.sentence() == "adds pool `x86`: 1 kept machine of cx23 in fsn1"
