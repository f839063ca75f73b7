"""No function of the project is of radon's grade D or worse (a cyclomatic complexity above
20): a function that branches that much is split where its cases part."""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank, cc_visit

from emulator.process import PROJECT_ROOT

FOLDERS = ("machines", "emulator", "testkit", "bench", "scripts", "tests")


def blocks() -> list[tuple[str, str, int]]:
    """Every function and method, with its file and complexity."""
    found = []
    for folder in FOLDERS:
        for path in sorted((PROJECT_ROOT / folder).rglob("*.py")):
            for block in cc_visit(path.read_text()):
                found.append(
                    (str(path.relative_to(PROJECT_ROOT)), block.fullname, block.complexity)
                )
    return found


def test_no_function_is_of_grade_d_or_worse() -> None:
    graded = [(file, name, n) for file, name, n in blocks() if cc_rank(n) >= "D"]
    assert graded == []


def test_every_folder_is_read() -> None:
    assert all((PROJECT_ROOT / folder).is_dir() for folder in FOLDERS)
    assert any(Path(file).parts[0] == "machines" for file, _, _ in blocks())
