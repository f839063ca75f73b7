"""The README's "Your first stack", run as written there, against the emulator.

Step 1's required block is pasted into a fresh shell, as it is, and gives the token and the
passphrase; the emulator starts from step 2's line, as written but on a free port (``--port
0``: the demo may hold 4080), in a shell that has exported them. The other commands run in a
fresh checkout (a git repository made of a project copy), in a shell that has exported step
1's variables and nothing else of the project's, state left where the README's default puts
it (``.pulumi-state/`` of the checkout); the one step that is not a command, editing the
stack file, is done by ``$EDITOR``, which makes the two edits the section names for the
emulator (its endpoint, on the port it listens on, and no ``ops`` key). Then the section's
Python, the autoscaler, runs outside the checkout with the optional ``ORCA_PULUMI_PROJECT``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hcloud import Client

from emulator.auth import check_token
from emulator.process import PROJECT_ROOT
from machines import automation
from machines.runtime.labels import machine_name
from testkit import readme
from testkit.commands import commit, git

pytestmark = pytest.mark.engine

SECTION = readme.section("Your first stack")
SHELL = readme.blocks(SECTION, "sh")
REQUIRED, OPTIONAL = [b for b in SHELL if all(c.startswith("export ") for c in readme.commands(b))]
[EMULATOR] = [b for b in SHELL if "python -m emulator" in b]
COMMANDS = [b for b in SHELL if b not in (REQUIRED, OPTIONAL, EMULATOR)]
[AUTOSCALER] = readme.blocks(SECTION, "python")
EDITOR = """\
#!{python}
import sys
from pathlib import Path

path = Path(sys.argv[1])
text = path.read_text()
edits = [("  # hcloud:endpoint: http://127.0.0.1:4080/v1\\n", "  hcloud:endpoint: {url}\\n"),
         ("    - ops\\n", "")]
for old, new in edits:
    assert old in text, f"the example stack no longer has {{old!r}}"
    text = text.replace(old, new)
path.write_text(text)
"""


def plain_environment() -> dict[str, str]:
    """This process's environment without anything of the project's or the clouds'."""
    dropped = ("ORCA_", "HCLOUD_", "PULUMI_CONFIG_", "PULUMI_BACKEND_URL", "AWS_", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if not k.startswith(dropped)}


def pasted(block: str, names: list[str], cwd: Path | None = None) -> dict[str, str]:
    """What ``block``, pasted into a fresh shell in ``cwd``, exports: the values of
    ``names``."""
    shown = "".join(f'printf "%s\\0" "${name}"\n' for name in names)
    done = subprocess.run(
        ["bash", "-c", f"{block.rstrip()}\n{shown}"],
        cwd=cwd,
        env=plain_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dict(zip(names, done.stdout.split("\0")[:-1], strict=True))


@pytest.fixture(scope="module")
def operator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Client, dict]]:
    """A fresh checkout, the emulator started by step 2, and the shell's environment: step
    1's exports as pasted, an editor."""
    root = tmp_path_factory.mktemp("first-stack")
    checkout = automation.copy_project(root / "checkout")
    shutil.copy(PROJECT_ROOT / ".gitignore", checkout / ".gitignore")
    shutil.copytree(  # a clone has the emulator, which step 2 runs from the checkout
        PROJECT_ROOT / "emulator",
        checkout / "emulator",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    git(checkout, "init", "-q", "-b", "main")
    commit(checkout, message="a fresh clone")
    values = pasted(REQUIRED, readme.exported(REQUIRED))
    engine = automation.engine_bin()
    assert engine is not None
    env = {
        **plain_environment(),
        **values,
        "PATH": os.pathsep.join([str(engine), os.environ["PATH"]]),
        "PULUMI_HOME": os.environ.get("PULUMI_HOME")
        or str(automation.CHECKOUT / automation.ENGINE_DIR / "home"),
        "GIT_AUTHOR_NAME": "o", "GIT_AUTHOR_EMAIL": "o@example.com",
        "GIT_COMMITTER_NAME": "o", "GIT_COMMITTER_EMAIL": "o@example.com",
    }  # fmt: skip
    [line] = readme.commands(EMULATOR)
    assert "--port 4080 " in line
    log = (root / "emulator.log").open("w")
    started = subprocess.Popen(
        ["bash", "-c", line.replace("--port 4080 ", "--port 0 ")],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    assert started.stdout is not None
    try:
        url = started.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url), (root / "emulator.log").read_text()
        editor = root / "editor.py"
        editor.write_text(EDITOR.format(python=sys.executable, url=url))
        editor.chmod(0o755)
        env["EDITOR"] = str(editor)
        try:
            yield checkout, Client(token=values["HCLOUD_TOKEN"], api_endpoint=url), env
        finally:
            with pytest.MonkeyPatch.context() as patch:
                for name, value in values.items():
                    patch.setenv(name, value)
                patch.delenv("PULUMI_BACKEND_URL", raising=False)
                automation.destroy("prod", project=checkout, on_output=lambda _line: None)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have ended by itself
            os.killpg(started.pid, signal.SIGTERM)
        started.stdout.read()  # the end of its output: the emulator has stopped
        started.stdout.close()
        started.wait()
        log.close()


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


def test_step_one_names_the_required_variables_apart_from_the_optional_ones():
    required, optional = readme.exported(REQUIRED), readme.exported(OPTIONAL)
    assert required == ["HCLOUD_TOKEN", "PULUMI_CONFIG_PASSPHRASE"]
    assert optional == ["PULUMI_BACKEND_URL", "ORCA_PULUMI_PROJECT"]
    assert all(line.split("#", 1)[1].strip() for line in (REQUIRED + OPTIONAL).splitlines())


def test_step_one_pasted_as_it_is_gives_a_token_of_the_apis_form():
    values = pasted(REQUIRED, readme.exported(REQUIRED))
    assert check_token(values["HCLOUD_TOKEN"]) == values["HCLOUD_TOKEN"]
    assert values["PULUMI_CONFIG_PASSPHRASE"]


def test_the_commands_bring_up_a_production_stack_and_commit_its_salt(operator):
    checkout, client, env = operator
    shell_env = dict(env)
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
    names = {s.name for s in client.servers.get_all()}
    assert names == {
        *(machine_name("prod", "builders", n) for n in (1, 2, 3)),
        machine_name("prod", "x86", 1),
    }


def test_the_autoscaler_reads_the_stack_from_outside_the_checkout(operator, tmp_path):
    checkout, _, env = operator
    [project] = [line for line in readme.commands(OPTIONAL) if "ORCA_PULUMI_PROJECT=" in line]
    env = {**env, **pasted(project, ["ORCA_PULUMI_PROJECT"], cwd=checkout)}
    assert env["ORCA_PULUMI_PROJECT"] == str(checkout)
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
