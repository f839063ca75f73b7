"""Where the Pulumi project, its stack files, its state and its engine live."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from machines.program.backend import fence_url, stack_backend
from machines.runtime.errors import SettingsError
from machines.runtime.settings import ORCA_FENCE_URL, ORCA_PULUMI_PROJECT, PULUMI_BACKEND_URL

STATE_DIR = ".pulumi-state"
"""The checkout's own state directory (``Pulumi.yaml``'s ``backend: url:``) and, whatever
the backend, where the project's stack locks live."""
ENGINE_DIR = ".pulumi-engine"
INSTALL_HINT = "run scripts/install-pulumi, which builds it into .pulumi-engine/"

CHECKOUT = Path(__file__).resolve().parent.parent.parent
"""The checkout this package runs from: its engine and, by default, its Pulumi project."""

PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "requirements.txt")
PROJECT_DIRS = ("machines", "stacks")


@dataclass(frozen=True)
class Project:
    """The Pulumi project of an operation: its directory and its ``Pulumi.yaml``, read once."""

    root: Path
    settings: Mapping[str, object]

    @classmethod
    def of(cls, project: str | Path | Project | None = None) -> Project:
        """``project``, else ``$ORCA_PULUMI_PROJECT``, else this checkout; its settings read."""
        if isinstance(project, Project):
            return project
        root = Path(project or os.environ.get(ORCA_PULUMI_PROJECT) or CHECKOUT).resolve()
        if not (root / "Pulumi.yaml").is_file():
            raise SettingsError(
                f"{root} has no Pulumi.yaml: point {ORCA_PULUMI_PROJECT} at the orca-machines "
                "project"
            )
        return cls(root, read_yaml(root / "Pulumi.yaml"))

    @property
    def name(self) -> str:
        """The project's name (``name:``), under which a ``file://`` backend keeps its stacks."""
        return str(self.settings.get("name") or "")

    def stack_file(self, stack: str) -> Path:
        """Where ``stack``'s settings live: ``Pulumi.<stack>.yaml`` in the ``stackConfigDir``."""
        config_dir = self.settings.get("stackConfigDir") or "."
        return self.root / str(config_dir) / f"Pulumi.{short_name(stack)}.yaml"

    def backend_url(self) -> str:
        """``$PULUMI_BACKEND_URL``, else the project's own backend, as its ``Pulumi.yaml`` says
        (``machines.program.backend``, the one home of how both faces read it)."""
        url = stack_backend(self.root, self.settings, os.environ)
        if not url:
            raise SettingsError(
                f"{self.root / 'Pulumi.yaml'} names no backend (backend: url:) and "
                f"{PULUMI_BACKEND_URL} is unset: set {PULUMI_BACKEND_URL}, or restore backend: "
                f"url: file://{STATE_DIR}"
            )
        return url


def fence_env(
    project: str | Path | Project | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``ORCA_FENCE_URL`` of a provider from one of the project's stacks
    (``machines.program.backend.fence_url``, ``environ``: this process's by default)."""
    env = os.environ if environ is None else environ
    url = env.get(ORCA_FENCE_URL, "") or fence_url(Project.of(project).backend_url(), env)
    return {ORCA_FENCE_URL: url} if url else {}


def project_root(project: str | Path | Project | None = None) -> Path:
    """The Pulumi project: ``project``, else ``$ORCA_PULUMI_PROJECT``, else this checkout."""
    return Project.of(project).root


def stack_file(stack: str, project: str | Path | Project | None = None) -> Path:
    """Where ``stack``'s settings live: ``Pulumi.<stack>.yaml`` in the ``stackConfigDir``."""
    return Project.of(project).stack_file(stack)


def backend_url(project: str | Path | Project | None = None) -> str:
    """The stack's backend (``Project.backend_url``)."""
    return Project.of(project).backend_url()


def copy_project(dest: str | Path, source: str | Path | None = None) -> Path:
    """A copy of the project (program, package, stacks) in ``dest``, sharing the virtualenv.

    Tests and the demo work on a copy so config they set never rewrites the committed stack
    files; point ``$ORCA_PULUMI_PROJECT`` (or ``project=``) at it.
    """
    root = project_root(source)
    target = Path(dest)
    target.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        if (root / name).is_file():
            shutil.copy2(root / name, target / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in PROJECT_DIRS:
        shutil.copytree(root / name, target / name, ignore=ignore, dirs_exist_ok=True)
    venv = root / ".venv"
    link = target / ".venv"
    if not link.exists():
        link.symlink_to(venv.resolve() if venv.exists() else Path(sys.prefix))
    return target


@contextmanager
def scratch_copy(project: str | Path | None = None) -> Iterator[Path]:
    """A throwaway ``copy_project`` for the block, with the project's state: runs that must
    leave the checkout's files as they are (the engine writes a new stack's salt into its
    stack file and rewrites the file when it does) work there. Without
    ``$PULUMI_BACKEND_URL`` the copy's ``.pulumi-state`` is the project's own."""
    root = project_root(project)
    with tempfile.TemporaryDirectory(prefix="orca-machines-") as scratch:
        copy = copy_project(Path(scratch) / "project", root)
        if not os.environ.get(PULUMI_BACKEND_URL):
            (root / STATE_DIR).mkdir(exist_ok=True)
            (copy / STATE_DIR).symlink_to(root / STATE_DIR)
        yield copy


def short_name(stack: str) -> str:
    return stack.rsplit("/", 1)[-1]


def shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def read_yaml(path: Path) -> dict[str, object]:
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except yaml.YAMLError as error:
        raise SettingsError(f"{path} is not valid YAML: {error}") from None
    return loaded if isinstance(loaded, dict) else {}
