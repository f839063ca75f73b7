"""The fence with real processes: a SIGKILLed process holds its slot until its hold ends and
no longer; autoscalers of a pool that spans both clouds never pass its max together."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulator.process import Emulator
from testkit import creators
from testkit.clouds import Cloud
from testkit.fences import entries
from testkit.span import PLACES, Span, pools_json

MAX = 2
SPAN_MAX = 4
"""The spanning pool's max: two servers on Hetzner (the project's limit), then EC2."""


def test_a_killed_process_holds_its_slot_until_its_hold_ends_and_no_longer(
    hetzner_cloud: Cloud,
    emulator: Emulator,
    fence_url: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    cloud = hetzner_cloud
    monkeypatch.setenv("ORCA_POOL_MAX", f"ci={MAX}")
    provider = cloud.provider()
    cloud.creates_refused()  # the child retries its create, its slot held, until killed
    spec = cloud.spec()
    start = tmp_path / "go"
    start.touch()
    child = subprocess.Popen(
        [
            sys.executable, "-m", "testkit.creators", cloud.kind, "killed", "1",
            "--type", spec.machine_type, "--location", spec.location, "--start", str(start),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ORCA_CALL_TIMEOUT": "12", "ORCA_LIST_MAX_AGE": "1"},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not entries(provider.fence, live=True) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    [held] = entries(provider.fence, live=True)
    assert held["name"] == "killed-0"
    emulator.control.clear_faults()

    while_held = [provider.create(cloud.spec(f"ci-{n}")) for n in range(MAX)]
    time.sleep(max(0.0, float(str(held["until"])) - time.time()))  # its hold ends
    after = provider.create(cloud.spec("ci-after"))

    assert [c.ok for c in while_held] == [True, False]
    assert "counted over every process" in while_held[1].reason
    assert after.ok, after.reason
    assert len(cloud.live()) == MAX


def test_autoscalers_of_a_pool_across_clouds_never_pass_its_max_together(
    span: Span, fence_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ORCA_POOLS", pools_json(max=SPAN_MAX))
    span.emulator.control.set_limits(servers=2)  # Hetzner's project full after two
    first = PLACES[0]

    reports = creators.run(
        "hetzner", 3, SPAN_MAX, machine_type=first.machine_type, location=first.location,
        workdir=tmp_path,
    )  # fmt: skip

    made = [a for r in reports for a in r.answers if a["outcome"] == "ok"]
    live = span.live()
    assert len(made) == SPAN_MAX, json.dumps([r.answers for r in reports])[:3000]
    assert len(live["hetzner"]) == 2
    assert len(live["ec2"]) == SPAN_MAX - 2
