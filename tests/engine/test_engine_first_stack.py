"""The README's "Your first stack", run as written there, against the emulator.

The section's commands run in a fresh checkout (a git repository made of a project copy), in
a shell that has exported what its first block names and nothing else of the project's; the
one step that is not a command, editing the stack file, is done by ``$EDITOR``, which points
the copied example at the emulator as an operator points it at their project. Then the
section's Python, the autoscaler, runs outside the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from emulator.process import PROJECT_ROOT, Emulator
from machines import automation
from machines.runtime.labels import machine_name
from testkit import hetzner, readme
from testkit.commands import commit, git

pytestmark = pytest.mark.engine

SECTION = readme.section("Your first stack")
EXPORTS, *COMMANDS = readme.blocks(SECTION, "sh")
[AUTOSCALER] = readme.blocks(SECTION, "python")
PASSPHRASE = "first-stack-passphrase"
OPS_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImIMymLnOQYYsqlkYOyldzatFs/rmIMKaXGu7Gd0hB6 ops"
EDITOR = """\
#!{python}
import sys
from pathlib import Path

path = Path(sys.argv[1])
text = path.read_text()
old = "  # hcloud:endpoint: http://127.0.0.1:4080/v1\\n"
assert old in text, "the example stack no longer shows hcloud:endpoint"
path.write_text(text.replace(old, "  hcloud:endpoint: {url}\\n"))
"""


def plain_environment() -> dict[str, str]:
    """This process's environment without anything of the project's or the clouds'."""
    dropped = ("ORCA_", "HCLOUD_", "PULUMI_CONFIG_", "PULUMI_BACKEND_URL", "AWS_", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if not k.startswith(dropped)}


@pytest.fixture(scope="module")
def operator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Emulator, dict]]:
    """A fresh checkout, an emulator with the project's existing SSH key ``ops``, and the
    shell's environment: the exports of step 1 (given this test's values), an editor."""
    root = tmp_path_factory.mktemp("first-stack")
    checkout = automation.copy_project(root / "checkout")
    shutil.copy(PROJECT_ROOT / ".gitignore", checkout / ".gitignore")
    git(checkout, "init", "-q", "-b", "main")
    commit(checkout, message="a fresh clone")
    with hetzner.running() as emulator:
        hetzner.client(emulator).ssh_keys.create(name="ops", public_key=OPS_KEY)
        editor = root / "editor.py"
        editor.write_text(EDITOR.format(python=sys.executable, url=emulator.url))
        editor.chmod(0o755)
        values = {
            "HCLOUD_TOKEN": hetzner.TOKEN,
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_BACKEND_URL": (root / "state").as_uri(),
            "ORCA_PULUMI_PROJECT": str(checkout),
        }
        (root / "state").mkdir()
        engine = automation.engine_bin()
        assert engine is not None
        env = {
            **plain_environment(),
            **values,
            "PATH": os.pathsep.join([str(engine), os.environ["PATH"]]),
            "PULUMI_HOME": os.environ.get("PULUMI_HOME")
            or str(automation.CHECKOUT / automation.ENGINE_DIR / "home"),
            "EDITOR": str(editor),
            "GIT_AUTHOR_NAME": "o", "GIT_AUTHOR_EMAIL": "o@example.com",
            "GIT_COMMITTER_NAME": "o", "GIT_COMMITTER_EMAIL": "o@example.com",
        }  # fmt: skip
        try:
            yield checkout, emulator, env
        finally:
            with pytest.MonkeyPatch.context() as patch:
                for name, value in values.items():
                    patch.setenv(name, value)
                automation.destroy("prod", project=checkout, on_output=lambda _line: None)


def shell(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", line],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_step_one_names_every_variable_once():
    names = readme.exported(EXPORTS)
    assert len(names) == len(set(names))
    assert set(names) == {"HCLOUD_TOKEN", "PULUMI_CONFIG_PASSPHRASE", "PULUMI_BACKEND_URL",
                          "ORCA_PULUMI_PROJECT"}  # fmt: skip
    assert all(line.split("#", 1)[1].strip() for line in EXPORTS.splitlines())


def test_the_commands_bring_up_a_production_stack_and_commit_its_salt(operator):
    checkout, emulator, env = operator
    shell_env = {k: v for k, v in env.items() if k != "ORCA_PULUMI_PROJECT"}
    shell_env["PATH"] = os.pathsep.join([str(checkout / ".venv" / "bin"), shell_env["PATH"]])
    said = []
    for block in COMMANDS:
        for line in readme.commands(block):
            done = shell(line, checkout, shell_env)
            expected = 2 if " preview " in f" {line} " else 0
            assert done.returncode == expected, f"{line}\n{done.stdout}\n{done.stderr}"
            said.append((line, done.stdout))
    outputs = dict(said)
    assert outputs["python -m machines up prod"].startswith("stack prod: machines: 4 created")
    status = outputs["python -m machines status prod"].splitlines()
    assert [row.split()[:3] for row in status[1:3]] == [
        ["builders", "cax21", "fsn1"],
        ["x86", "cx33", "nbg1"],
    ]
    rows = outputs["python -m machines ls builders --stack prod"].splitlines()[1:]
    assert sorted((row.split()[1], row.split()[5]) for row in rows) == [
        (machine_name("prod", "builders", n), "stack") for n in (1, 2, 3)
    ]
    committed = git(checkout, "show", "HEAD:stacks/Pulumi.prod.yaml")
    assert yaml.safe_load(committed)["encryptionsalt"].startswith("v1:")
    assert git(checkout, "status", "--porcelain") == ""
    names = {s.name for s in hetzner.client(emulator).servers.get_all()}
    assert names == {
        *(machine_name("prod", "builders", n) for n in (1, 2, 3)),
        machine_name("prod", "x86", 1),
    }


def test_the_autoscaler_reads_the_stack_from_outside_the_checkout(operator, tmp_path):
    _, _, env = operator
    elsewhere = tmp_path / "autoscaler"
    elsewhere.mkdir()
    (elsewhere / "autoscaler.py").write_text(AUTOSCALER)
    without_passphrase = {k: v for k, v in env.items() if k != "PULUMI_CONFIG_PASSPHRASE"}
    done = subprocess.run(
        [sys.executable, "autoscaler.py"],
        cwd=elsewhere,
        env=without_passphrase,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{sorted(machine_name('prod', 'builders', n) for n in (1, 2, 3))}\n"
