"""Which stacks a change affects, decided from a real git repository's history."""

from __future__ import annotations

from pathlib import Path

import pytest

from machines.automation.affected import (
    GitError,
    affected_stacks,
    changed_files,
    check_checked_out,
    ci_stacks,
    stacks_of,
)
from machines.runtime.errors import MachinesError
from testkit.commands import commit, git

STACKS = ("Pulumi.prod.yaml", "Pulumi.staging.yaml", "Pulumi.local.yaml")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with three stacks, committed on main, and a branch for the change."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(
        root,
        {
            "Pulumi.yaml": "name: orca-machines\n",
            "__main__.py": "\n",
            "machines/cli.py": "\n",
            "requirements.txt": "pulumi==3.272.0\n",
            "README.md": "docs\n",
            **{f"stacks/{name}": "config: {}\n" for name in STACKS},
        },
        "base",
    )
    git(root, "checkout", "-q", "-b", "change")
    return root


def affected(root: Path) -> list[str]:
    return affected_stacks(changed_files("main", project=root), stacks_of(root))


def test_a_changed_stack_file_affects_that_stack_only(project):
    commit(project, {"stacks/Pulumi.staging.yaml": "config: {a: 1}\n"})
    assert affected(project) == ["staging"]


def test_a_program_change_affects_every_stack(project):
    commit(project, {"machines/cli.py": "# changed\n"})
    assert affected(project) == ["local", "prod", "staging"]


@pytest.mark.parametrize("name", ["Pulumi.yaml", "__main__.py", "requirements-dev.txt"])
def test_the_project_file_entry_point_and_requirements_affect_every_stack(project, name):
    commit(project, {name: "# changed\n"})
    assert affected(project) == ["local", "prod", "staging"]


def test_a_documentation_change_affects_no_stack(project):
    commit(project, {"README.md": "more docs\n", "stacks/README.md": "about stacks\n"})
    assert affected(project) == []


def test_a_deleted_stack_file_is_not_previewed(project):
    git(project, "rm", "-q", "stacks/Pulumi.prod.yaml")
    commit(project, {})
    assert affected(project) == []


def test_changes_on_the_base_since_the_branch_left_it_are_not_the_changes_own(project):
    commit(project, {"stacks/Pulumi.local.yaml": "config: {b: 2}\n"})
    git(project, "checkout", "-q", "main")
    commit(project, {"machines/cli.py": "# main moved on\n"})
    git(project, "checkout", "-q", "change")
    assert affected(project) == ["local"]


def test_a_project_below_the_repository_root_sees_its_own_paths(tmp_path):
    root = tmp_path / "mono"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(
        root,
        {
            "infra/Pulumi.yaml": "name: orca-machines\n",
            "infra/stacks/Pulumi.prod.yaml": "config: {}\n",
            "other/machines/x.py": "\n",
        },
    )
    git(root, "checkout", "-q", "-b", "change")
    commit(root, {"other/machines/x.py": "# not the program\n"})
    project = root / "infra"
    assert affected_stacks(changed_files("main", project=project), stacks_of(project)) == []
    commit(root, {"infra/stacks/Pulumi.prod.yaml": "config: {a: 1}\n"})
    assert affected_stacks(changed_files("main", project=project), stacks_of(project)) == ["prod"]


def test_an_unknown_base_is_one_error_saying_to_fetch_it(project):
    with pytest.raises(GitError, match="git diff --name-only failed: .*fetch-depth: 0"):
        changed_files("origin/nope", project=project)


def test_head_must_be_the_checkout_the_previews_run_on(project):
    commit(project, {"stacks/Pulumi.prod.yaml": "config: {a: 1}\n"})
    check_checked_out("HEAD", project=project)
    check_checked_out("change", project=project)
    with pytest.raises(GitError, match="--head main is not the commit checked out"):
        check_checked_out("main", project=project)


def test_ci_considers_the_deployments_stacks_never_local_or_the_examples(project):
    commit(project, {"stacks/Pulumi.hetzner-example.yaml": "config: {}\n"})
    assert stacks_of(project) == ["hetzner-example", "local", "prod", "staging"]
    assert ci_stacks("", project) == ["prod", "staging"]


def test_ci_considers_the_stacks_named_and_refuses_one_without_a_file(project):
    assert ci_stacks("staging, local", project) == ["local", "staging"]
    with pytest.raises(MachinesError, match=r"no stack file for stack nope in stacks/"):
        ci_stacks("prod,nope", project)
