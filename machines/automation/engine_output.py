"""The engine's output read for the lines that say why a run failed, on one line."""

from __future__ import annotations

import re

from machines.automation.project import (
    INSTALL_HINT,
)
from machines.program.clouds import plugins
from machines.runtime.secrets import mask
from machines.runtime.settings import PULUMI_CONFIG_PASSPHRASE

_STACK_TYPE = "pulumi:pulumi:Stack"

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GENERIC = re.compile(
    r"^error: (update|preview|destroy|refresh) failed$|^error: \d+ errors? occurred"
)
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception|Exit)\b.*)$")
_RESOURCE_HEADER = re.compile(r"^  (\S+) \((.+)\):$")
_DEBRIS = re.compile(r"_InactiveRpcError|KeyboardInterrupt|CancelledError|StatusCode\.|grpc")
"""What a program prints when the engine stops it after another error (a failed resource,
a cancel): a consequence, never the cause, so it is left out when a cause is known."""
_CHAIN = (
    "Traceback (most recent call last):",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_LIMIT = 600
_DELETE_TIMED_OUT = re.compile(
    r"^(?P<name>\S+): deleting (?P<urn>urn:\S+): .*(?:context deadline exceeded|timed out)"
)
"""A resource's delete the plugin gave up at its ``customTimeouts``: the program bounds the
delete of shared resources, whose users it deletes first, so something else holds it."""
_TIMED_OUT = re.compile(r"context deadline exceeded|timed out")
_INVOKE = re.compile(r"invoke of (\S+) failed: invocation of \1 returned an error: ")
"""Pulumi's doubled wording of a failed data source call; said once, its token kept."""


def engine_summary(text: str) -> str:
    """The meaningful lines of a failed engine run (``CommandError`` text), on one line.

    Errors listed under ``Diagnostics:`` come first (a program's exception is reduced to
    its message), then ``error:`` lines of stderr, then the last line said. Secrets are
    already masked by the engine; the token is never in its output.
    """
    stdout, stderr = _split_result(_ANSI.sub("", text))
    found = _diagnostics(stdout) or [
        line.strip().removeprefix("error: ")
        for line in stderr.splitlines()
        if line.strip().startswith("error:") and not _GENERIC.match(line.strip())
    ]
    if not found:
        last = [line.strip() for line in (stderr or stdout).splitlines() if line.strip()]
        found = last[-1:] or ["the engine failed without saying why"]
    found = _held_deletes(found)
    unique = list(dict.fromkeys(_INVOKE.sub(r"\1 failed: ", line) for line in found))
    summary = "; ".join(unique)
    missing = [name for name in plugins().values() if re.search(rf"\b{name}\b", summary)]
    if "resource plugin" in summary and missing:
        summary += f" (the {missing[0]} plugin is missing: {INSTALL_HINT})"
    if "incorrect passphrase" in summary:
        summary += f" ({PULUMI_CONFIG_PASSPHRASE} is not the passphrase of the stack's secrets)"
    summary = mask(summary)
    return summary if len(summary) <= _LIMIT else summary[: _LIMIT - 3] + "..."


def _held_deletes(errors: list[str]) -> list[str]:
    """A timed-out delete said as what it is, one line naming the resource: in use by
    something the stack does not manage. Its other lines (the request the deadline cut
    short) are left out."""
    held: dict[str, str] = {}
    for error in errors:
        found = _DELETE_TIMED_OUT.match(error)
        if found:
            kind = found["urn"].split("::")[-2].rsplit(":", 1)[-1]
            held[found["name"]] = (
                f"{kind} {found['name']} could not be deleted in time: something the stack "
                "does not manage still uses it (a server or instance of another owner, or one "
                "made by hand): delete or detach it, then run the destroy again"
            )
    if not held:
        return errors
    kept = [e for e in errors if not (e.split(": ", 1)[0] in held and _TIMED_OUT.search(e))]
    return [*held.values(), *kept]


def resource_errors(text: str) -> list[str]:
    """Each error of a failed run's ``Diagnostics:``, whole: ``<resource>: <error>`` for a
    resource's (``engine_summary`` shortens them; a reader of one resource's cause reads
    these)."""
    return _diagnostics(_split_result(_ANSI.sub("", text))[0])


def _split_result(text: str) -> tuple[str, str]:
    """``(stdout, stderr)`` of a ``CommandResult`` as the automation API formats it."""
    head, sep, stderr = text.rpartition("\n stderr: ")
    if not sep:
        return text, ""
    _, sep, stdout = head.partition("\n stdout: ")
    return (stdout if sep else head), stderr


def _diagnostics(stdout: str) -> list[str]:
    """Each error of the ``Diagnostics:`` section, one string per error."""
    lines = stdout.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Diagnostics:")
    except StopIteration:
        return []
    errors: list[str] = []
    block: list[str] = []
    resource = ""

    def flush() -> None:
        if block:
            errors.append(_error_text(block, resource))
            block.clear()

    for line in lines[start + 1 :]:
        if line and not line.startswith(" "):
            break
        header = _RESOURCE_HEADER.match(line)
        stripped = line.strip()
        if header:
            flush()
            resource = "" if header.group(1) == _STACK_TYPE else header.group(2)
        elif stripped.startswith(("error:", "warning:", "info:")):
            flush()
            if stripped.startswith("error:"):
                block.append(line)
        elif block and stripped:
            block.append(line)
    flush()
    found = [e for e in errors if e]
    causes = [e for e in found if not _DEBRIS.search(e)]
    if found and not causes:
        return ["the engine stopped the program before it finished"]
    return causes


def _error_text(block: list[str], resource: str) -> str:
    """One error's text: a Python exception's message, else its lines joined."""
    traceback = next(
        (i for i, line in enumerate(block) if line.strip() == "Traceback (most recent call last):"),
        None,
    )
    if traceback is not None:
        indent = len(block[traceback]) - len(block[traceback].lstrip())
        tail: list[str] = []
        for line in block[traceback + 1 :]:
            if line.strip() in _CHAIN:
                break
            if len(line) - len(line.lstrip()) == indent:
                tail.append(line.strip())
        if tail:
            first = _EXCEPTION.match(tail[0])
            message = [first.group(1) if first else tail[0], *tail[1:]]
            return "; ".join(message)
    text = " ".join(line.strip() for line in block).removeprefix("error: ")
    if _GENERIC.match(f"error: {text}"):
        return ""
    return f"{resource}: {text}" if resource else text
