"""The aws stand-in refuses AWS itself through the engine, in one line naming the official plugin.

An operator's EC2 stack as the example has it (no ``aws:endpoints``: AWS's own endpoints),
previewed with plain ``pulumi preview`` on this engine: the stand-in refuses in Configure,
before any request (its Go test counts them), and the preview fails with that one line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from machines import automation
from testkit import moto_server
from testkit.engine_stacks import pin

pytestmark = pytest.mark.engine

STACK = "aws-itself"
AWS = pin("pulumi-aws")


def _stand_in_installed(env: dict[str, str], engine: Path) -> bool:
    listed = subprocess.run(
        [str(engine / "pulumi"), "plugin", "ls", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return any(
        p.get("name") == "aws" and p.get("version") == f"{AWS}+orca.standin"
        for p in json.loads(listed.stdout or "[]")
    )


def test_a_stack_on_aws_itself_is_refused_before_any_request(tmp_path, engine):
    project = automation.copy_project(tmp_path / "project")
    stacks = project / "stacks"
    shutil.copy(stacks / "Pulumi.ec2-example.yaml", stacks / f"Pulumi.{STACK}.yaml")
    (tmp_path / "state").mkdir()
    dropped = ("ORCA_", "HCLOUD_", "PULUMI_CONFIG_", "PULUMI_BACKEND_URL", "AWS_", "VIRTUAL_ENV")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(dropped)},
        **moto_server.CREDENTIALS,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "PATH": os.pathsep.join([str(engine), os.environ["PATH"]]),
        "PULUMI_HOME": os.environ.get("PULUMI_HOME")
        or str(automation.CHECKOUT / automation.ENGINE_DIR / "home"),
        "PULUMI_BACKEND_URL": (tmp_path / "state").as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": "aws-itself",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
    }
    if not _stand_in_installed(env, engine):
        pytest.skip("the engine has the official aws plugin, not the stand-in this test is about")

    def pulumi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(engine / "pulumi"), *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    init = pulumi("stack", "init", STACK)
    assert init.returncode == 0, init.stderr
    done = pulumi("preview", "--stack", STACK, "--non-interactive")
    assert done.returncode != 0
    output = done.stdout + done.stderr
    # The engine shows the refusal where it happened and again in its diagnostics: each time
    # as the one line the plugin gave.
    lines = [line for line in output.splitlines() if "refuses the" in line]
    assert lines, output
    for line in lines:
        assert (
            "tools/pulumi-resource-aws) refuses the ec2 endpoint "
            "https://ec2.eu-central-1.amazonaws.com (AWS itself: no endpoint configured)" in line
        )
        assert line.endswith(
            "for AWS itself install the official aws plugin: "
            f"pulumi plugin install resource aws {AWS}"
        )
