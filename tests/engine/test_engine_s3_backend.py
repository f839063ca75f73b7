"""State in a shared S3 bucket (moto's server), not in a checkout: automation and the CLI
work on it, and the engine's lock in the bucket keeps a second operation out."""

from __future__ import annotations

import pytest

from machines import automation
from machines.cli.exits import ExitCode
from testkit import moto_server
from testkit.commands import machines_cli as cli
from testkit.engine_stacks import S3_STACK, STATE_BUCKET

pytestmark = pytest.mark.engine

INSTANCE = "aws:ec2/instance:Instance"


def test_automation_and_the_cli_share_state_in_a_bucket_with_its_lock(s3_deployment):
    s3 = moto_server.client(s3_deployment.moto.url, "s3")

    def keys(prefix: str) -> list[str]:
        listed = s3.list_objects_v2(Bucket=STATE_BUCKET, Prefix=prefix)
        return [o["Key"] for o in listed.get("Contents", [])]

    locks_seen: list[list[str]] = []
    diff = automation.up(
        S3_STACK, on_output=lambda _line: locks_seen.append(keys(".pulumi/locks/"))
    )
    assert [c.name for c in diff.changes if c.type == INSTANCE] == ["prod-ci-1"]
    held = next(seen for seen in locks_seen if seen)
    assert len(held) == 1
    assert keys(".pulumi/locks/") == []
    assert f".pulumi/stacks/orca-machines/{S3_STACK}.json" in keys(".pulumi/stacks/")

    shown = cli("ls", "ci", "--stack", S3_STACK)
    assert shown.returncode == ExitCode.OK, shown.stderr
    assert "prod-ci-1" in shown.stdout

    # Another operation holds the stack: the CLI says so and changes nothing.
    s3.put_object(Bucket=STATE_BUCKET, Key=held[0], Body=b'{"pid": 1, "username": "ci"}')
    try:
        done = cli("destroy", S3_STACK, "--yes")
        assert done.returncode == ExitCode.ERROR
        assert "locked" in done.stderr, done.stderr
        assert automation.outputs(S3_STACK)["provider"] == "ec2"
    finally:
        s3.delete_object(Bucket=STATE_BUCKET, Key=held[0])

    done = cli("destroy", S3_STACK, "--yes")
    assert done.returncode == ExitCode.OK, done.stderr
    assert automation.outputs(S3_STACK) == {}
