"""Which stacks a change between two git revisions affects, so CI previews only those.

A changed ``stacks/Pulumi.<stack>.yaml`` affects that stack; a change to the program
(``Pulumi.yaml``, ``__main__.py``, ``machines/``) or to ``requirements*.txt`` affects every
stack. Paths are taken relative to the project, which may sit below the repository's root.

Which stacks CI considers at all (``ci_stacks``): those named (``--stacks``,
``$ORCA_CI_STACKS``), else the deployment's: every stack file but the ``local`` stack (the
emulator's) and the examples (``*-example``, templates to copy), which no CI can preview.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from machines.automation.engine import LOCAL_STACK
from machines.automation.project import project_root
from machines.runtime.errors import MachinesError
from machines.runtime.settings import ORCA_CI_STACKS

STACKS_DIR = "stacks"
EXAMPLE_SUFFIX = "-example"
PROGRAM_FILES = ("Pulumi.yaml", "__main__.py")
PROGRAM_DIRS = ("machines/",)
_STACK_FILE = re.compile(r"^stacks/Pulumi\.(?P<stack>[^/]+)\.ya?ml$")
_REQUIREMENTS = re.compile(r"^requirements[^/]*\.txt$")


class GitError(MachinesError):
    """A git command failed: the message names the command and what git said."""


def changed_files(base: str, head: str = "HEAD", *, project: str | Path | None = None) -> list[str]:
    """Files changed from the merge base of ``base`` and ``head`` to ``head``, project-relative.

    The merge base, as a pull request shows it: changes on ``base`` since the branch
    left it are not the change's own.
    """
    root = project_root(project)
    prefix = _git(root, "rev-parse", "--show-prefix").strip()
    listed = _git(root, "diff", "--name-only", "--no-renames", "-z", f"{base}...{head}", "--", ".")
    return sorted(
        path.removeprefix(prefix) for path in listed.split("\0") if path.startswith(prefix)
    )


def check_checked_out(head: str, *, project: str | Path | None = None) -> None:
    """Previews run on the checkout: ``head`` must be the commit checked out."""
    root = project_root(project)
    wanted = _git(root, "rev-parse", "--verify", f"{head}^{{commit}}").strip()
    here = _git(root, "rev-parse", "--verify", "HEAD^{commit}").strip()
    if wanted != here:
        raise GitError(
            f"--head {head} is not the commit checked out ({here[:12]}): previews run on the "
            f"checkout, so check out {head} first or leave --head out"
        )


def stacks_of(project: str | Path | None = None) -> list[str]:
    """The stacks that have a stack file in the project's checkout."""
    root = project_root(project) / STACKS_DIR
    found = (_STACK_FILE.match(f"{STACKS_DIR}/{p.name}") for p in root.iterdir())
    return sorted(m.group("stack") for m in found if m)


def stacks_at(revision: str, *, project: str | Path | None = None) -> list[str]:
    """The stacks that have a stack file at ``revision`` (the base branch): stacks that
    exist already, where a stack new in the change has none."""
    root = project_root(project)
    listed = _git(
        root, "ls-tree", "-r", "-z", "--name-only", f"{revision}^{{commit}}", "--", STACKS_DIR
    )
    found = (_STACK_FILE.match(path) for path in listed.split("\0") if path)
    return sorted(m.group("stack") for m in found if m)


def is_deployment(stack: str) -> bool:
    """A stack of the deployment: neither the emulator's ``local`` nor an example."""
    return stack != LOCAL_STACK and not stack.endswith(EXAMPLE_SUFFIX)


def ci_stacks(named: str, project: str | Path | None = None) -> list[str]:
    """The stacks CI considers: those ``named`` (comma-separated, each with a stack file),
    else every deployment stack of the project."""
    stacks = stacks_of(project)
    wanted = [s.strip() for s in named.split(",") if s.strip()]
    if not wanted:
        return [s for s in stacks if is_deployment(s)]
    unknown = sorted(set(wanted) - set(stacks))
    if unknown:
        raise MachinesError(
            f"no stack file for stack {', '.join(unknown)} in {STACKS_DIR}/: fix --stacks "
            f"(or ${ORCA_CI_STACKS})"
        )
    return [s for s in stacks if s in wanted]


def affects_all(path: str) -> bool:
    """A change to this file changes the program or its dependencies: every stack."""
    return path in PROGRAM_FILES or path.startswith(PROGRAM_DIRS) or bool(_REQUIREMENTS.match(path))


def affected_stacks(changed: list[str], stacks: list[str]) -> list[str]:
    """The stacks among ``stacks`` that the changed files affect, in ``stacks``' order."""
    if any(affects_all(path) for path in changed):
        return list(stacks)
    named = {m.group("stack") for m in map(_STACK_FILE.match, changed) if m}
    return [s for s in stacks if s in named]


def _git(root: Path, *args: str) -> str:
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not on PATH: install git (ci-preview compares two revisions)")
    try:
        done = subprocess.run(  # noqa: S603 (git with the command line's revisions, no shell)
            [git, "-C", str(root), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except OSError as error:
        raise GitError(f"git could not run ({error.strerror or error}): install git") from None
    if done.returncode != 0:
        said = " ".join(done.stderr.split()) or f"exit {done.returncode}"
        raise GitError(
            f"git {' '.join(args[:2])} failed: {said} (CI must fetch the base revision: "
            "actions/checkout with fetch-depth: 0, or GIT_DEPTH: 0 on GitLab)"
        )
    return done.stdout
