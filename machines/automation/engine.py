"""The engine: finding it, the passphrase and variables every run gets, and its errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path

from pulumi import automation as auto

from machines.automation.cancel import CancellableCommand
from machines.automation.engine_output import engine_summary
from machines.automation.project import (
    CHECKOUT,
    ENGINE_DIR,
    INSTALL_HINT,
    Project,
    backend_url,
    read_yaml,
    short_name,
)
from machines.runtime.errors import MachinesError, SettingsError
from machines.runtime.settings import (
    ORCA_PULUMI_PROJECT,
    PATH,
    PULUMI_BACKEND_URL,
    PULUMI_CONFIG_PASSPHRASE,
    PULUMI_CONFIG_PASSPHRASE_FILE,
    PULUMI_HOME,
    PULUMI_SKIP_UPDATE_CHECK,
)

LOCAL_STACK = "local"
LOCAL_PASSPHRASE = "orca-machines-local"  # noqa: S105 (documented, for the local stack only)
"""The passphrase of the ``local`` stack's secrets when ``PULUMI_CONFIG_PASSPHRASE`` is unset.

The local stack runs on the emulator and holds no real secret; every other stack needs its
own passphrase in the environment.
"""


WHERE_HINT = (
    f"set {PULUMI_BACKEND_URL} to the backend it lives in (and {ORCA_PULUMI_PROJECT} to its "
    "project, when this is not its checkout)"
)
"""What a process outside the operator's shell (an autoscaler, a cron job) sets to find a
stack: the backend and the project are never guessed."""


class EngineError(MachinesError):
    """The Pulumi engine failed or is unusable: the message says why and what to do."""


class EngineMissingError(EngineError):
    """No Pulumi engine was found: ``scripts/install-pulumi`` builds one."""


class StackNotFoundError(EngineError):
    """The stack does not exist in the backend (or has no stack file to create it from)."""


def engine_bin() -> Path | None:
    """The directory of the engine: ``.pulumi-engine/bin``, else where ``pulumi`` is on PATH."""
    built = CHECKOUT / ENGINE_DIR / "bin"
    if (built / "pulumi").is_file() and (built / "pulumi-language-python").is_file():
        return built
    found = shutil.which("pulumi")
    if found and shutil.which("pulumi-language-python"):
        return Path(found).resolve().parent
    return None


def passphrase_env(
    stack: str, root: Path | Project, settings: Mapping[str, object] | None = None
) -> dict[str, str]:
    """The passphrase variables the engine gets; an error if a stack needing one has none.
    ``settings``: the stack file as the operation read it (else it is read here)."""
    if PULUMI_CONFIG_PASSPHRASE in os.environ or os.environ.get(PULUMI_CONFIG_PASSPHRASE_FILE):
        return {}
    if short_name(stack) == LOCAL_STACK:
        return {PULUMI_CONFIG_PASSPHRASE: LOCAL_PASSPHRASE}
    if settings is None:
        settings = read_yaml(Project.of(root).stack_file(stack))
    if secrets_provider(settings) != "passphrase":
        return {}
    raise SettingsError(
        f"{PULUMI_CONFIG_PASSPHRASE} is not set: stack {stack} keeps its secrets with a "
        f"passphrase; set {PULUMI_CONFIG_PASSPHRASE} (or {PULUMI_CONFIG_PASSPHRASE_FILE}) "
        f"to it (only the {LOCAL_STACK} stack has a default)"
    )


def secrets_provider(settings: Mapping[str, object]) -> str:
    """How the stack file says its secrets are kept (``secretsprovider``; a passphrase)."""
    return str(settings.get("secretsprovider") or "passphrase")


def engine_command(
    stack: str,
    root: Path | Project,
    *,
    need_passphrase: bool = True,
    settings: Mapping[str, object] | None = None,
    command: auto.PulumiCommand | None = None,
) -> tuple[auto.PulumiCommand, dict[str, str]]:
    """The engine's command and the variables every run of it gets; settings checked first.

    ``command``: the one an operation made already, reused (making one runs ``pulumi
    version``: an operation makes it once); ``settings``: the stack file it read."""
    project = Project.of(root)
    local = short_name(stack) == LOCAL_STACK
    passphrase = passphrase_env(stack, project, settings) if need_passphrase or local else {}
    binary = engine_bin()
    if binary is None:
        raise EngineMissingError(f"the Pulumi engine is not installed: {INSTALL_HINT}")
    env = {
        PATH: os.pathsep.join([str(binary), os.environ.get(PATH, "")]),
        PULUMI_BACKEND_URL: project.backend_url(),
        PULUMI_SKIP_UPDATE_CHECK: "true",
        **passphrase,
    }
    home = os.environ.get(PULUMI_HOME) or str(CHECKOUT / ENGINE_DIR / "home")
    if Path(home).is_dir():
        env[PULUMI_HOME] = home
    if command is not None:
        return command, env
    return new_command(binary), env


def new_command(binary: Path | None = None) -> auto.PulumiCommand:
    """The engine's command at ``binary`` (default: ``engine_bin()``); making it runs
    ``pulumi version``, as the Automation API checks the engine it drives."""
    binary = binary or engine_bin()
    if binary is None:
        raise EngineMissingError(f"the Pulumi engine is not installed: {INSTALL_HINT}")
    root_dir = str(binary.parent) if binary.name == "bin" else None
    try:
        return CancellableCommand(root=root_dir)
    except (OSError, subprocess.CalledProcessError, auto.InvalidVersionError) as error:
        raise EngineMissingError(
            f"the Pulumi engine in {binary} does not run ({error}): {INSTALL_HINT}"
        ) from None


def command_soon() -> Future[auto.PulumiCommand]:
    """``new_command()`` made in a thread: its ``pulumi version`` (a fifth of a second)
    runs while the operation reads and checks its stack. Its error, if any, is the
    future's, said when the command is first needed."""
    future: Future[auto.PulumiCommand] = Future()

    def make() -> None:
        try:
            future.set_result(new_command())
        except BaseException as error:  # the taker re-raises it
            future.set_exception(error)

    threading.Thread(target=make, name="pulumi version", daemon=True).start()
    return future


class OperationWorkspace(auto.LocalWorkspace):
    """A workspace whose stacks are never selected through the engine: every command of an
    operation names its stack (``--stack``), so ``pulumi stack select`` would only start the
    binary once more; whether the stack exists the operation knows from its state."""

    def select_stack(self, stack_name: str) -> None:
        return None


def workspace(
    stack: str,
    root: Path | Project,
    *,
    settings: Mapping[str, object] | None = None,
    command: auto.PulumiCommand | None = None,
) -> auto.LocalWorkspace:
    """A workspace on the project; a stack it creates keeps secrets as its file says."""
    project = Project.of(root)
    if settings is None:
        settings = read_yaml(project.stack_file(stack))
    made, env = engine_command(stack, project, settings=settings, command=command)
    return OperationWorkspace(
        work_dir=str(project.root),
        env_vars=env,
        secrets_provider=secrets_provider(settings),
        pulumi_command=made,
    )


@contextmanager
def engine_errors(stack: str, action: str, project: str | Path | Project | None) -> Iterator[None]:
    """Turn the automation API's errors into ``EngineError`` with the lines that say why."""
    try:
        yield
    except auto.StackNotFoundError:
        raise StackNotFoundError(
            f"stack {stack} does not exist in {backend_url(project)}: bring it up first "
            f"(orca-machines up {stack}), or {WHERE_HINT}"
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
