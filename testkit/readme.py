"""The README and the docs read as a procedure: a section of a document and its fenced code
blocks, so a test runs them, or holds a table to the code, as written there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
_FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"(?P<level>#{1,6}) (?P<title>.+)")


def doc(name: str) -> Path:
    """The path of ``docs/<name>.md``; a name without such a file is an error."""
    path = DOCS / f"{name}.md"
    if not path.is_file():
        raise FileNotFoundError(f"no document docs/{name}.md")
    return path


def section(title: str, path: Path = README) -> str:
    """The text of the heading ``title`` in ``path`` (any level), up to the next heading of
    its level or above; headings inside fenced blocks (a shell comment) are not headings."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start: int | None = None
    level = 0
    fenced = False
    for number, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING.fullmatch(line.rstrip("\n"))
        if heading is None:
            continue
        if start is None and heading["title"] == title:
            start, level = number, len(heading["level"])
        elif start is not None and len(heading["level"]) <= level:
            return "".join(lines[start:number])
    if start is None:
        raise ValueError(f"{path.name} has no heading {title!r}")
    return "".join(lines[start:])


def blocks(text: str, lang: str) -> list[str]:
    """The bodies of the fenced blocks of ``lang`` in ``text``, in order."""
    return [m.group("body") for m in _FENCE.finditer(text) if m.group("lang") == lang]


def commands(block: str) -> list[str]:
    """A shell block's commands, one a line, comments and blank lines left out."""
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def exported(block: str) -> list[str]:
    """The variables a block of ``export NAME=...`` lines names, in order."""
    return re.findall(r"^export (\w+)=", block, re.MULTILINE)


def table(text: str) -> list[str]:
    """The body rows of the first table in ``text`` (its header and rule left out), up to
    the first line that is not a row."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows[2:]
