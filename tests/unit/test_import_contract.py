"""The import contract of pyproject.toml (``[tool.importlinter]``) holds, no module of
``machines`` is in an import cycle (lazy, for type checking or by name: ``testkit.imports``),
and what a process really loads stays light: ``import machines`` loads no cloud or Pulumi
library, and each cloud's provider loads its own client library only."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testkit import imports

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
    copy = imports.changed_copy(ROOT, tmp_path, module, f"import {library}")

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


BY_NAME = "import importlib\n\n\n"
"""What code added to a module to import by name starts with."""


def test_no_module_of_machines_is_in_an_import_cycle_even_lazily_or_by_name():
    built = imports.graph()

    assert [imports.said(cycle) for cycle in imports.cycles(built)] == []
    assert imports.against_layers(built) == []


@pytest.mark.parametrize(
    ("module", "code", "cycle"),
    [
        # inside a function: the options' rules importing the pool model built on them
        (
            "runtime/options.py",
            "def _pool() -> None:\n    from machines.runtime.pool import Pool  # noqa: F401",
            {"machines.runtime.options", "machines.runtime.pool"},
        ),
        # for type checking only: the settings importing the pool that reads them
        (
            "runtime/settings.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from machines.runtime.pool import Pool  # noqa: F401",
            {"machines.runtime.settings", "machines.runtime.pool"},
        ),
        # by name: telemetry importing the provider that imports it by name
        (
            "runtime/telemetry.py",
            "def _provider() -> object:\n"
            "    return importlib.import_module('machines.runtime.provider')",
            {"machines.runtime.telemetry", "machines.runtime.provider"},
        ),
        # by name: the provider importing the factory that builds it (install does not)
        (
            "runtime/provider.py",
            "def _factory() -> object:\n"
            "    return importlib.import_module('machines.runtime.factory')",
            {"machines.runtime.provider", "machines.runtime.factory"},
        ),
        # through the registry's names: what a cloud declares asking the registry
        (
            "runtime/cloud.py",
            "def _kinds() -> object:\n"
            "    from machines.runtime.clouds import kinds\n\n    return kinds()",
            {"machines.runtime.cloud", "machines.runtime.clouds"},
        ),
    ],
)
def test_an_import_cycle_breaks_the_check(tmp_path, module, code, cycle):
    copy = imports.changed_copy(ROOT, tmp_path, module, BY_NAME + code)

    done = imports.checked(copy)

    assert done.returncode == 1, done.stdout + done.stderr
    said = [set(line.split(" -> ")) for line in done.stdout.splitlines() if ":" not in line]
    assert any(cycle <= modules for modules in said), done.stdout


def test_an_import_by_name_against_the_runtime_layers_breaks_the_check(tmp_path):
    # No cycle (arch imports nothing), but errors.py is the runtime's lowest layer.
    code = "def _arch() -> object:\n    return importlib.import_module('machines.runtime.arch')"
    copy = imports.changed_copy(ROOT, tmp_path, "runtime/errors.py", BY_NAME + code)

    done = imports.checked(copy)

    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "runtime-layers: machines.runtime.errors -> machines.runtime.arch"
    ]


def test_an_import_by_a_name_the_check_cannot_follow_is_refused(tmp_path):
    code = "def _any(name: str) -> object:\n    return importlib.import_module(name)"
    copy = imports.changed_copy(ROOT, tmp_path, "runtime/labels.py", BY_NAME + code)

    done = imports.checked(copy)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "machines.runtime.labels" in done.stdout
    assert "testkit.imports.COMPUTED" in done.stdout


def test_a_runtime_module_importing_one_above_it_breaks_the_contract(tmp_path):
    code = "if TYPE_CHECKING:\n    from machines.runtime.provider import Provider"
    copy = imports.changed_copy(ROOT, tmp_path, "runtime/telemetry.py", code)

    done = lint_imports(copy)

    assert done.returncode != 0, done.stdout
    assert "The runtime's modules in layers" in done.stdout
    assert "machines.runtime.telemetry -> machines.runtime.provider" in done.stdout
