"""A pool's image by label selector through the official hcloud plugin on the emulator,
the runtime and the preview: the newest *available* snapshot, never a newer one still being
made (which no server can boot), and the preview names the one the pool will boot."""

from __future__ import annotations

import pytest

from machines import automation
from machines.automation import ci_preview
from testkit.commands import machines_cli
from testkit.specs import hetzner_pool, spec

pytestmark = pytest.mark.engine

LABELS = {"role": "ci-worker"}
POOL = hetzner_pool({"imageSelector": "role=ci-worker"})


def test_a_snapshot_being_made_is_passed_over_by_the_stack_the_runtime_and_the_preview(
    deployment,
):
    control, hcloud = deployment.emulator.control, deployment.hcloud
    made = control.add_image(
        labels=LABELS, description="worker v1", created="2026-01-01T00:00:00+00:00"
    )
    control.add_image(
        labels=LABELS,
        description="worker v2",
        created="2026-06-01T00:00:00+00:00",
        status="creating",
    )
    automation.set_config("local", {"orca-machines:pools": [POOL]})

    automation.up("local")
    kept = hcloud.servers.get_by_name("local-x86-1.stack")
    created = automation.provider("local").create(spec("x86-7", pool="x86"))
    preview = machines_cli("preview", "local", "--diff")
    [result] = ci_preview.run(["local"])
    comment = ci_preview.render([result])

    assert kept is not None
    assert kept.image is not None
    assert kept.image.id == made
    assert created.machine is not None, created.reason
    assert hcloud.servers.get_by_id(int(created.machine.id)).image.id == made
    boots = f"new machines boot snapshot {made} (worker v1), the newest available matching"
    assert preview.returncode == 0, preview.stderr
    assert f"pool x86: 1 kept by the stack, 1 made by the autoscaler, 0 to delete; {boots}" in (
        preview.stdout
    )
    assert f"> pool x86: {boots} 'role=ci-worker'" in comment
    automation.destroy("local")
