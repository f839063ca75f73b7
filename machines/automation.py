"""The Pulumi program driven from Python: what the autoscaler, the CLI and CI run.

Every function works on a local workspace of this project (``Pulumi.yaml``; stack files in
its ``stackConfigDir``, ``stacks/``) with the engine that ``scripts/install-pulumi`` builds:

* state: ``$PULUMI_BACKEND_URL`` when set, else the git-ignored ``.pulumi-state/`` of the
  project (``file://``), so nothing leaves the machine unless asked;
* secrets: a passphrase, ``$PULUMI_CONFIG_PASSPHRASE`` (or ``_FILE``); the ``local`` stack
  alone falls back to ``LOCAL_PASSPHRASE``, every other stack must be given one;
* engine: ``.pulumi-engine/bin`` and ``.pulumi-engine/home`` (``$PULUMI_HOME`` wins), else a
  ``pulumi`` on ``PATH``;
* project: this checkout, or ``$ORCA_PULUMI_PROJECT`` (a copy, see ``copy_project``).

Pulumi writes a new stack's passphrase salt (``encryptionsalt``) into its stack file, and
config set here rewrites that file (comments kept): commit the salt with the stack. A stack
file that already has one keeps it, so the ``local`` stack's file can carry the salt of
``LOCAL_PASSPHRASE`` and stay unchanged; tests and the demo work on a ``copy_project``.

The engine's output streams to ``on_output`` (default: stderr) while it runs; its failures
become ``EngineError`` with the lines that say why. The only module importing
``pulumi.automation``: ``import machines`` never loads it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import yaml
from pulumi import automation as auto
from pydantic import BaseModel, ConfigDict, ValidationError

from machines.errors import MachinesError, SettingsError
from machines.settings import HCLOUD_TOKEN, ORCA_OWNER, ORCA_PROVIDER

LOCAL_STACK = "local"
LOCAL_PASSPHRASE = "orca-machines-local"  # noqa: S105 (documented, for the local stack only)
"""The passphrase of the ``local`` stack's secrets when ``PULUMI_CONFIG_PASSPHRASE`` is unset.

The local stack runs on the emulator and holds no real secret; every other stack needs its
own passphrase in the environment.
"""

PULUMI_BACKEND_URL = "PULUMI_BACKEND_URL"
PULUMI_CONFIG_PASSPHRASE = "PULUMI_CONFIG_PASSPHRASE"  # noqa: S105 (a variable's name)
PULUMI_CONFIG_PASSPHRASE_FILE = "PULUMI_CONFIG_PASSPHRASE_FILE"  # noqa: S105
PULUMI_HOME = "PULUMI_HOME"
ORCA_PULUMI_PROJECT = "ORCA_PULUMI_PROJECT"
"""The Pulumi project directory to work on; default: this checkout."""


STATE_DIR = ".pulumi-state"
ENGINE_DIR = ".pulumi-engine"
INSTALL_HINT = "run scripts/install-pulumi, which builds it into .pulumi-engine/"

CHECKOUT = Path(__file__).resolve().parent.parent
"""The checkout this package runs from: its engine and, by default, its Pulumi project."""

PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "requirements.txt")
PROJECT_DIRS = ("machines", "stacks")

OnOutput = Callable[[str], object]
Op = Literal["create", "update", "replace", "delete"]
OPS: tuple[Op, ...] = ("create", "update", "replace", "delete")

_OPS: Mapping[str, Op] = {
    "create": "create",
    "import": "create",
    "update": "update",
    "replace": "replace",
    "create-replacement": "replace",
    "delete-replaced": "replace",
    "import-replacement": "replace",
    "delete": "delete",
    "discard": "delete",
}
"""The engine's step ops folded into the four a reviewer cares about; others are not changes."""

_KEYED = frozenset({"update", "replace"})
_STACK_TYPE = "pulumi:pulumi:Stack"
_SECRET = "[secret]"  # noqa: S105 (the engine's mask, not a secret)


class EngineError(MachinesError):
    """The Pulumi engine failed or is unusable: the message says why and what to do."""


class EngineMissingError(EngineError):
    """No Pulumi engine was found: ``scripts/install-pulumi`` builds one."""


class StackNotFoundError(EngineError):
    """The stack does not exist in the backend (or has no stack file to create it from)."""


def print_progress(line: str) -> None:
    """The default ``on_output``: the engine's progress, line by line, on stderr."""
    print(line, file=sys.stderr, flush=True)


class Change(BaseModel):
    """One resource a preview or update changes: the op, its type and name, changed keys."""

    model_config = ConfigDict(frozen=True)

    op: Op
    type: str
    name: str
    urn: str
    keys: tuple[str, ...] = ()


class Diff(BaseModel):
    """What an operation changes, per resource; property names only, never values."""

    model_config = ConfigDict(frozen=True)

    stack: str
    changes: tuple[Change, ...] = ()

    @property
    def counts(self) -> dict[Op, int]:
        """How many resources each op touches, every op present."""
        return {op: sum(1 for c in self.changes if c.op == op) for op in OPS}

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def sorted(self) -> list[Change]:
        """The changes grouped by op (create, update, replace, delete), then type and name."""
        return sorted(self.changes, key=lambda c: (OPS.index(c.op), c.type, c.name))

    def summary(self) -> str:
        """``2 to create, 0 to update, 0 to replace, 1 to delete`` or ``no changes``."""
        if not self.has_changes:
            return "no changes"
        return ", ".join(f"{n} to {op}" for op, n in self.counts.items())

    def text(self) -> str:
        """One line per change (``+ create  type  name``), then the summary."""
        marks = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}
        lines = [
            f"{marks[c.op]:<2} {c.op:<7} {c.type}  {c.name}"
            + (f"  [{', '.join(c.keys)}]" if c.keys else "")
            for c in self.sorted()
        ]
        return "\n".join([*lines, f"stack {self.stack}: {self.summary()}"])

    def markdown(self) -> str:
        """The diff for a pull request: a table grouped by op, type and name, and a summary."""
        title = f"### Pulumi preview of stack `{_cell(self.stack)}`"
        if not self.has_changes:
            return f"{title}\n\nNo changes.\n"
        rows = [
            f"| {c.op} | `{_cell(c.type)}` | `{_cell(c.name)}` | "
            f"{', '.join(f'`{_cell(k)}`' for k in c.keys)} |"
            for c in self.sorted()
        ]
        counts = ", ".join(f"{n} to {op}" for op, n in self.counts.items())
        return "\n".join(
            [
                title,
                "",
                "| Op | Type | Name | Changed |",
                "| --- | --- | --- | --- |",
                *rows,
                "",
                f"**{counts}.**",
                "",
            ]
        )

    def report(self) -> dict[str, object]:
        """The diff as JSON-ready data: stack, counts, has_changes and the changes."""
        return {
            "stack": self.stack,
            "has_changes": self.has_changes,
            "counts": self.counts,
            "changes": [c.model_dump() for c in self.sorted()],
        }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")


class StackRuntime(BaseModel):
    """What a stack's outputs tell the runtime: provider kind, owner and settings variables."""

    model_config = ConfigDict(frozen=True)

    provider: str
    owner: str
    env: dict[str, str]


def project_root(project: str | Path | None = None) -> Path:
    """The Pulumi project: ``project``, else ``$ORCA_PULUMI_PROJECT``, else this checkout."""
    root = Path(project or os.environ.get(ORCA_PULUMI_PROJECT) or CHECKOUT).resolve()
    if not (root / "Pulumi.yaml").is_file():
        raise SettingsError(
            f"{root} has no Pulumi.yaml: point {ORCA_PULUMI_PROJECT} at the orca-machines project"
        )
    return root


def stack_file(stack: str, project: str | Path | None = None) -> Path:
    """Where ``stack``'s settings live: ``Pulumi.<stack>.yaml`` in the ``stackConfigDir``."""
    root = project_root(project)
    settings = _yaml(root / "Pulumi.yaml")
    config_dir = settings.get("stackConfigDir") or "."
    return root / str(config_dir) / f"Pulumi.{_short(stack)}.yaml"


def backend_url(project: str | Path | None = None) -> str:
    """``$PULUMI_BACKEND_URL``, else the project's own ``.pulumi-state/`` (made on demand)."""
    given = os.environ.get(PULUMI_BACKEND_URL, "")
    if given:
        return given
    state = project_root(project) / STATE_DIR
    state.mkdir(exist_ok=True)
    return state.as_uri()


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


def select(stack: str, *, project: str | Path | None = None, create: bool = False) -> auto.Stack:
    """The stack, selected; with ``create``, made first when its stack file exists."""
    root = project_root(project)
    workspace = _workspace(stack, root)
    with _engine_errors(stack, "select", root):
        try:
            return auto.Stack.select(stack, workspace)
        except auto.StackNotFoundError:
            if not create:
                raise
        if not stack_file(stack, root).is_file():
            raise StackNotFoundError(
                f"stack {stack} has no stack file {_shown(stack_file(stack, root), root)}: "
                "copy stacks/Pulumi.hetzner-example.yaml to it and edit it"
            )
        return auto.Stack.create(stack, workspace)


def preview(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> Diff:
    """What ``up`` would change, per resource, without changing anything."""
    selected = select(stack, project=project, create=True)
    collect = _Changes()
    with _engine_errors(stack, "preview", project):
        selected.preview(on_output=on_output or print_progress, on_event=collect, color="never")
    return collect.diff(stack)


def up(stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None) -> Diff:
    """Make the cloud match the stack's configuration; return what was changed."""
    selected = select(stack, project=project, create=True)
    collect = _Changes()
    with _engine_errors(stack, "up", project):
        selected.up(on_output=on_output or print_progress, on_event=collect, color="never")
    return collect.diff(stack)


def destroy(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> Diff:
    """Delete every resource of the stack; the stack and its settings stay."""
    selected = select(stack, project=project)
    collect = _Changes()
    with _engine_errors(stack, "destroy", project):
        selected.destroy(on_output=on_output or print_progress, on_event=collect, color="never")
    return collect.diff(stack)


def refresh(
    stack: str, *, project: str | Path | None = None, on_output: OnOutput | None = None
) -> dict[str, int]:
    """Read the cloud back into the stack's state; return the engine's counts per op."""
    selected = select(stack, project=project)
    with _engine_errors(stack, "refresh", project):
        result = selected.refresh(on_output=on_output or print_progress, color="never")
    changes = result.summary.resource_changes or {}
    return {str(getattr(op, "value", op)): int(n) for op, n in changes.items()}


def outputs(
    stack: str, *, project: str | Path | None = None, show_secrets: bool = False
) -> dict[str, object]:
    """The stack's outputs as plain values; secrets read ``[secret]`` unless ``show_secrets``."""
    root = project_root(project)
    command, env = _engine(stack, root, need_passphrase=show_secrets)
    args = ["stack", "output", "--json", "--stack", stack]
    if show_secrets:
        args.append("--show-secrets")
    with _engine_errors(stack, "outputs", root):
        result = command.run(args, str(root), env)
    values = json.loads(result.stdout or "{}")
    if not isinstance(values, dict):
        raise EngineError(f"stack {stack}: the engine's outputs are not an object")
    return values


def runtime_settings(stack: str, *, project: str | Path | None = None) -> StackRuntime:
    """The runtime's configuration from the stack's ``provider``, ``owner`` and ``env``."""
    values = outputs(stack, project=project)
    try:
        return StackRuntime.model_validate(
            {key: values.get(key) for key in ("provider", "owner", "env")}
        )
    except ValidationError as error:
        missing = sorted({str(e["loc"][0]) for e in error.errors(include_url=False)})
        raise EngineError(
            f"stack {stack} has no usable output {', '.join(missing)}: "
            f"bring it up first (orca-machines up {stack})"
        ) from None


def runtime_env(stack: str, *, project: str | Path | None = None) -> dict[str, str]:
    """The runtime's settings variables (the ``env`` output) plus provider kind and owner."""
    runtime = runtime_settings(stack, project=project)
    return {ORCA_PROVIDER: runtime.provider, ORCA_OWNER: runtime.owner, **runtime.env}


def set_config(
    stack: str,
    values: Mapping[str, object],
    *,
    path: bool = False,
    secret: bool = False,
    project: str | Path | None = None,
) -> None:
    """Set configuration in the stack's file, through the engine (``pulumi config set``).

    Keys are ``namespace:name``; objects and lists are stored as YAML structure. With
    ``path``, keys are paths into a value (``orca-machines:pools[0].size``) and values
    scalars. The file keeps its comments; work on a ``copy_project`` to keep the
    committed stack files as they are.
    """
    root = project_root(project)
    selected = select(stack, project=root, create=True)
    with _engine_errors(stack, "config", root):
        if path:
            selected.set_all_config(
                {k: auto.ConfigValue(_scalar(v), secret=secret) for k, v in values.items()},
                path=True,
            )
            return
        entries = {
            key: (
                {"value": value, "secret": secret}
                if isinstance(value, str)
                else {"value": json.dumps(value), "objectValue": value, "secret": secret}
                if isinstance(value, Mapping | list | tuple)
                else {"value": _scalar(value), "secret": secret}
            )
            for key, value in values.items()
        }
        selected.set_all_config_json(json.dumps(entries))


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise SettingsError(f"{type(value).__name__} is not a scalar: set it without path=True")


class _Changes:
    """An ``on_event`` collecting each resource's step, once per resource."""

    def __init__(self) -> None:
        self._changes: dict[str, Change] = {}

    def __call__(self, event: auto.EngineEvent) -> None:
        pre = event.resource_pre_event
        if pre is None:
            return
        meta = pre.metadata
        op = _OPS.get(str(getattr(meta.op, "value", meta.op)))
        if op is None or meta.type == _STACK_TYPE:
            return
        if meta.urn in self._changes and op != "replace":
            return
        keys = tuple(sorted({*(meta.diffs or ()), *(meta.keys or ())})) if op in _KEYED else ()
        self._changes[meta.urn] = Change(
            op=op, type=meta.type, name=meta.urn.rsplit("::", 1)[-1], urn=meta.urn, keys=keys
        )

    def diff(self, stack: str) -> Diff:
        return Diff(stack=stack, changes=tuple(self._changes.values()))


def _short(stack: str) -> str:
    return stack.rsplit("/", 1)[-1]


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _yaml(path: Path) -> dict[str, object]:
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except yaml.YAMLError as error:
        raise SettingsError(f"{path} is not valid YAML: {error}") from None
    return loaded if isinstance(loaded, dict) else {}


def _engine_bin() -> Path | None:
    """The directory of the engine: ``.pulumi-engine/bin``, else where ``pulumi`` is on PATH."""
    built = CHECKOUT / ENGINE_DIR / "bin"
    if (built / "pulumi").is_file() and (built / "pulumi-language-python").is_file():
        return built
    found = shutil.which("pulumi")
    if found and shutil.which("pulumi-language-python"):
        return Path(found).resolve().parent
    return None


def _passphrase(stack: str, root: Path) -> dict[str, str]:
    """The passphrase variables the engine gets; an error if a stack needing one has none."""
    if PULUMI_CONFIG_PASSPHRASE in os.environ or os.environ.get(PULUMI_CONFIG_PASSPHRASE_FILE):
        return {}
    if _short(stack) == LOCAL_STACK:
        return {PULUMI_CONFIG_PASSPHRASE: LOCAL_PASSPHRASE}
    secrets = str(_yaml(stack_file(stack, root)).get("secretsprovider") or "passphrase")
    if secrets != "passphrase":
        return {}
    raise SettingsError(
        f"{PULUMI_CONFIG_PASSPHRASE} is not set: stack {stack} keeps its secrets with a "
        f"passphrase; set {PULUMI_CONFIG_PASSPHRASE} (or {PULUMI_CONFIG_PASSPHRASE_FILE}) "
        f"to it (only the {LOCAL_STACK} stack has a default)"
    )


def _engine(
    stack: str, root: Path, *, need_passphrase: bool = True
) -> tuple[auto.PulumiCommand, dict[str, str]]:
    """The engine's command and the variables every run of it gets; settings checked first."""
    local = _short(stack) == LOCAL_STACK
    passphrase = _passphrase(stack, root) if need_passphrase or local else {}
    binary = _engine_bin()
    if binary is None:
        raise EngineMissingError(f"the Pulumi engine is not installed: {INSTALL_HINT}")
    env = {
        "PATH": os.pathsep.join([str(binary), os.environ.get("PATH", "")]),
        PULUMI_BACKEND_URL: backend_url(root),
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        **passphrase,
    }
    home = os.environ.get(PULUMI_HOME) or str(CHECKOUT / ENGINE_DIR / "home")
    if Path(home).is_dir():
        env[PULUMI_HOME] = home
    root_dir = str(binary.parent) if binary.name == "bin" else None
    try:
        command = auto.PulumiCommand(root=root_dir)
    except (OSError, subprocess.CalledProcessError, auto.InvalidVersionError) as error:
        raise EngineMissingError(
            f"the Pulumi engine in {binary} does not run ({error}): {INSTALL_HINT}"
        ) from None
    return command, env


def _workspace(stack: str, root: Path) -> auto.LocalWorkspace:
    """A workspace on the project; a stack it creates keeps secrets as its file says."""
    command, env = _engine(stack, root)
    secrets = _yaml(stack_file(stack, root)).get("secretsprovider") or "passphrase"
    return auto.LocalWorkspace(
        work_dir=str(root), env_vars=env, secrets_provider=str(secrets), pulumi_command=command
    )


@contextmanager
def _engine_errors(stack: str, action: str, project: str | Path | None) -> Iterator[None]:
    """Turn the automation API's errors into ``EngineError`` with the lines that say why."""
    try:
        yield
    except auto.StackNotFoundError:
        raise StackNotFoundError(
            f"stack {stack} does not exist in {backend_url(project)}: "
            f"bring it up first (orca-machines up {stack})"
        ) from None
    except auto.ConcurrentUpdateError as error:
        raise EngineError(
            f"{action} of stack {stack} failed: another operation holds the stack's lock "
            f"({engine_summary(str(error))})"
        ) from None
    except auto.CommandError as error:
        raise EngineError(
            f"{action} of stack {stack} failed: {engine_summary(str(error))}"
        ) from None
    except auto.InvalidVersionError as error:
        raise EngineMissingError(f"{error}: {INSTALL_HINT}") from None


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GENERIC = re.compile(
    r"^error: (update|preview|destroy|refresh) failed$|^error: \d+ errors? occurred"
)
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception|Exit)\b.*)$")
_RESOURCE_HEADER = re.compile(r"^  (\S+) \((.+)\):$")
_LIMIT = 600


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
    unique = list(dict.fromkeys(found))
    summary = "; ".join(unique)
    if "resource plugin" in summary and "hcloud" in summary:
        summary += f" (the hcloud plugin is missing: {INSTALL_HINT})"
    if "incorrect passphrase" in summary:
        summary += f" ({PULUMI_CONFIG_PASSPHRASE} is not the passphrase of the stack's secrets)"
    if token := os.environ.get(HCLOUD_TOKEN):
        summary = summary.replace(token, _SECRET)
    return summary if len(summary) <= _LIMIT else summary[: _LIMIT - 3] + "..."


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
    return [e for e in errors if e]


def _error_text(block: list[str], resource: str) -> str:
    """One error's text: a Python exception's message, else its lines joined."""
    traceback = next(
        (i for i, line in enumerate(block) if line.strip() == "Traceback (most recent call last):"),
        None,
    )
    if traceback is not None:
        indent = len(block[traceback]) - len(block[traceback].lstrip())
        tail = [
            line.strip()
            for line in block[traceback + 1 :]
            if len(line) - len(line.lstrip()) == indent
        ]
        if tail:
            first = _EXCEPTION.match(tail[0])
            message = [first.group(1) if first else tail[0], *tail[1:]]
            return "; ".join(message)
    text = " ".join(line.strip() for line in block).removeprefix("error: ")
    if _GENERIC.match(f"error: {text}"):
        return ""
    return f"{resource}: {text}" if resource else text
