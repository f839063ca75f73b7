"""The CI files pass their linters and keep to the project's rules: a broken one fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from emulator.process import PROJECT_ROOT
from machines.automation import CHECKOUT, ENGINE_DIR
from machines.automation.ci_preview import MARKER

WORKFLOWS = sorted((PROJECT_ROOT / ".github" / "workflows").glob("*.yml"))
GITLAB = PROJECT_ROOT / ".gitlab-ci.yml"
ACTIONLINT = CHECKOUT / ENGINE_DIR / "bin" / "actionlint"
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_both_workflows_exist():
    assert [w.name for w in WORKFLOWS] == ["drift.yml", "preview.yml"]


def test_github_workflows_pass_actionlint():
    if not ACTIONLINT.is_file():
        pytest.fail("actionlint is not installed: run scripts/install-tools", pytrace=False)
    done = run(ACTIONLINT, "-no-color", *WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_gitlab_ci_passes_gitlab_s_schema():
    done = run(CHECK_JSONSCHEMA, "--builtin-schema", "vendor.gitlab-ci", GITLAB)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - run: echo ${{ steps.nope.outputs.x }}\n"
    )
    done = run(ACTIONLINT, "-no-color", broken)
    assert done.returncode == 1
    assert "nope" in done.stdout


def test_the_gitlab_schema_catches_a_broken_file(tmp_path):
    broken = tmp_path / ".gitlab-ci.yml"
    broken.write_text("preview:\n  script: 3\n  when: sometimes\n")
    done = run(CHECK_JSONSCHEMA, "--builtin-schema", "vendor.gitlab-ci", broken)
    assert done.returncode == 1


@pytest.mark.parametrize("path", [*WORKFLOWS], ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit(path):
    jobs = yaml.safe_load(path.read_text())["jobs"]
    uses = [s["uses"] for job in jobs.values() for s in job["steps"] if "uses" in s]
    assert uses
    assert [u for u in uses if not PINNED.match(u)] == []


def test_the_preview_workflow_finds_its_comment_by_the_bodys_marker():
    text = (PROJECT_ROOT / ".github" / "workflows" / "preview.yml").read_text()
    assert f'body-includes: "{MARKER}"' in text
    assert "machines ci-preview --base" in text
    assert yaml.safe_load(GITLAB.read_text())["variables"]["MARKER"] == MARKER


@pytest.mark.parametrize(
    "name", ["HCLOUD_TOKEN", "AWS_SECRET_ACCESS_KEY", "PULUMI_CONFIG_PASSPHRASE"]
)
def test_secrets_come_from_the_secret_store(name):
    for path in WORKFLOWS:
        jobs = yaml.safe_load(path.read_text())["jobs"]
        for job in jobs.values():
            assert job["env"][name] == f"${{{{ secrets.{name} }}}}"
    assert name not in yaml.safe_load(GITLAB.read_text())["variables"]


def test_gitlab_caches_the_engine_under_a_key_of_the_same_files_as_github():
    github = set()
    for path in WORKFLOWS:
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            for step in job["steps"]:
                key = step.get("with", {}).get("key", "")
                if "hashFiles(" in key:
                    listed = key.split("hashFiles(", 1)[1].split(")", 1)[0]
                    github |= {f.strip(" '") for f in listed.split(",")}
    gitlab = yaml.safe_load(GITLAB.read_text())[".engine"]["cache"]["key"]["files"]
    assert github
    assert {f.removesuffix("/*") for f in gitlab} == github


def test_drift_runs_the_clis_check_of_the_deployments_stacks():
    drift = (PROJECT_ROOT / ".github" / "workflows" / "drift.yml").read_text()
    assert ".venv/bin/python -m machines drift\n" in drift
    assert "ORCA_CI_STACKS" in yaml.safe_load(drift)["jobs"]["drift"]["env"]
    assert yaml.safe_load(GITLAB.read_text())["drift"]["script"] == [
        ".venv/bin/python -m machines drift"
    ]


def test_a_ci_preview_that_failed_before_writing_its_body_shows_its_own_error():
    preview = yaml.safe_load((PROJECT_ROOT / ".github" / "workflows" / "preview.yml").read_text())
    steps = {s.get("name"): s for s in preview["jobs"]["preview"]["steps"]}
    run = steps["Preview the affected stacks"]["run"]
    assert "if [ -s preview.md ]; then\n  cat preview.md" in run
    assert "tee ci-preview.err" in run
    assert (
        "grep '^orca-machines: error: ' ci-preview.err"
        in steps["Fail with ci-preview's own error"]["run"]
    )


def _ci_texts() -> dict[str, str]:
    return {p.name: p.read_text() for p in [*WORKFLOWS, GITLAB]}


@pytest.mark.parametrize("path", [*WORKFLOWS], ids=lambda p: p.name)
def test_github_installs_pulumis_released_cli_at_the_pin_and_caches_its_plugins(path):
    steps = [s for job in yaml.safe_load(path.read_text())["jobs"].values() for s in job["steps"]]
    uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    assert "pulumi/actions" in uses
    assert uses["pulumi/actions"]["with"] == {"pulumi-version": "${{ steps.pins.outputs.pulumi }}"}
    pins = next(s for s in steps if s.get("id") == "pins")
    done = subprocess.run(
        ["bash", "-c", pins["run"].replace('"$GITHUB_OUTPUT"', "/dev/stdout")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    pin = re.search(r"^pulumi==(\S+)$", (PROJECT_ROOT / "requirements.txt").read_text(), re.M)
    assert pin
    assert done.stdout == f"pulumi={pin[1]}\n"
    caches = [s["with"] for s in steps if s.get("uses", "").startswith("actions/cache@")]
    assert caches == [
        {
            "path": ".pulumi-engine/home/plugins",
            "key": "pulumi-plugins-${{ runner.os }}-${{ hashFiles('requirements.txt') }}",
        }
    ]
    # No Go: nothing is built on a runner that can download Pulumi's binaries.
    assert "actions/setup-go" not in uses


def test_gitlab_installs_pulumis_released_cli_with_its_installer_at_the_pin():
    engine = yaml.safe_load(GITLAB.read_text())[".engine"]
    script = engine["before_script"]
    assert 'curl -fsSL https://get.pulumi.com | sh -s -- --version "$PULUMI_VERSION"' in script
    assert script.index('export PATH="$HOME/.pulumi/bin:$PATH"') < script.index(
        "scripts/install-pulumi --strict"
    )
    assert engine["cache"]["paths"] == [".pulumi-engine/home/plugins/"]
    assert "golang" not in engine["image"]


@pytest.mark.parametrize("name", sorted(_ci_texts()))
def test_ci_never_builds_the_aws_stand_in(name):
    text = _ci_texts()[name]
    assert "scripts/install-pulumi --strict\n" in text
    assert "--aws" not in text
    assert "tools/" not in text
