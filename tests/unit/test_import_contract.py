"""The import contract of pyproject.toml (``[tool.importlinter]``) holds, and what a process
really loads stays light: ``import machines`` loads no cloud or Pulumi library, and each
cloud's provider loads its own client library only."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("boto3", "botocore", "hcloud", "pulumi", "pulumi_aws", "pulumi_hcloud")

EC2_SETTINGS = {
    "AWS_REGION": "eu-central-1",
    "ORCA_EC2_SUBNETS": "eu-central-1a=subnet-0abc",
    "ORCA_EC2_SECURITY_GROUP": "sg-0123",
    "ORCA_EC2_INSTANCE_PROFILE": "orca-workers",
}


def heavy_libraries_after(code: str) -> list[str]:
    """The ``HEAVY`` libraries a fresh interpreter has loaded after running ``code``."""
    probe = f"import sys\n{code}\nprint(sorted({{m.split('.')[0] for m in sys.modules}}))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded: list[str] = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    return [name for name in loaded if name in HEAVY]


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` run on the ``machines`` package and ``pyproject.toml`` in ``root``."""
    command = Path(sys.executable).parent / "lint-imports"
    assert command.exists(), "no lint-imports: pip install -r requirements-dev.txt"
    return subprocess.run(
        [sys.executable, str(command), "--no-cache"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_import_contract_is_kept():
    done = lint_imports(ROOT)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "library"),
    [
        ("automation/availability.py", "requests"),
        ("program/components.py", "hcloud"),
        ("cli/pools.py", "boto3"),
        ("prometheus.py", "botocore"),
        ("runtime/provider.py", "urllib3"),
        ("runtime/shortages.py", "hcloud"),
        # A module new to the runtime is held by the contract without being named in it.
        ("runtime/new_module.py", "boto3"),
    ],
)
def test_a_cloud_library_outside_clouds_breaks_the_contract(tmp_path, module, library):
    copy = tmp_path / "checkout"
    shutil.copytree(
        ROOT / "machines", copy / "machines", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    with (copy / "machines" / module).open("a", encoding="utf-8") as source:
        source.write(f"\nimport {library}\n")

    done = lint_imports(copy)

    assert done.returncode != 0, done.stdout
    assert f"is not allowed to import {library}" in done.stdout


def test_importing_machines_loads_no_cloud_or_pulumi_library():
    assert heavy_libraries_after("import machines") == []


def test_hetzner_provider_loads_no_aws_or_pulumi_library(hetzner_env):
    code = "from machines import Provider\nProvider.of('hetzner')"

    assert heavy_libraries_after(code) == ["hcloud"]


def test_ec2_provider_loads_no_hcloud_or_pulumi_library():
    code = f"from machines import Provider\nProvider.of('ec2', 'prod', {EC2_SETTINGS!r})"

    assert heavy_libraries_after(code) == ["boto3", "botocore"]


def test_importing_machines_loads_no_opentelemetry():
    probe = "import sys, machines\nprint(sorted(m for m in sys.modules if 'opentelemetry' in m))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )

    assert done.stdout.strip() == "[]"
