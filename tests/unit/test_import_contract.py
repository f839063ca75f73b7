"""The import contract of pyproject.toml (``[tool.importlinter]``) holds, and ``import
machines`` stays light: the runtime never reaches the program, automation, the CLI or Pulumi.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contract_is_kept():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.exists(), (
        "lint-imports is not installed: pip install -r requirements-dev.txt"
    )

    done = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_importing_machines_loads_no_cloud_or_pulumi_library():
    code = (
        "import sys, machines; heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('boto3', 'botocore', 'pulumi', 'pulumi_hcloud', 'pulumi_aws', 'hcloud')]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
