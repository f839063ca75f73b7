"""One stack operation and what it works on, each made once and passed on.

An operation (``preview``, ``up``, ``status``, one stack of ``ci-preview`` ...) reads the
project's ``Pulumi.yaml`` and the stack's file once, makes one engine command (its
``pulumi version`` runs once, in a thread while the stack is read and checked; ``ci-preview``
shares it between its stacks), one workspace
and stack (never ``pulumi stack select``: every command names its stack), reads the stack's
state once (``machines.automation.state``: a ``file://`` backend's checkpoint without the
engine), builds the stack file's config, its deployment and the catalogue's settings once
(``catalogue``, passed to the check, the snapshot and the reports), checks the stack file
once and builds one runtime provider, which the check, the recovery and the snapshot share
when their settings are the same.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path

from pulumi import automation as auto
from pulumi.automation._stack import StackInitMode  # not re-exported by the package

from machines.automation import engine
from machines.automation.checks import check_deployment, config_of, deployed_as_written
from machines.automation.engine import (
    WHERE_HINT,
    StackNotFoundError,
    engine_errors,
)
from machines.automation.project import Project, fence_env, read_yaml, shown
from machines.automation.snapshot import (
    SharedListing,
    StackRuntime,
    StackSnapshot,
    listed_snapshot,
    runtime_of,
)
from machines.automation.state import StackState, read_state
from machines.program.config.loader import load
from machines.program.config.models import BaseDeployment
from machines.program.config.stack_config import StackConfig
from machines.runtime.clouds import stack_environ
from machines.runtime.errors import MachinesError
from machines.runtime.provider import Provider

OnOutput = Callable[[str], object]
"""Receives each line the engine prints while it runs."""


def print_progress(line: str) -> None:
    """The default ``on_output``: the engine's progress, line by line, on stderr."""
    print(line, file=sys.stderr, flush=True)


class OperationStack(auto.Stack):
    """A stack whose runs start the engine once each: the Automation API's ``up``,
    ``refresh`` and ``destroy`` read the stack's outputs (``pulumi stack output``, twice) and
    its last update (``pulumi stack history``) after the run for their result; an operation
    takes what it reports from the run's own events, so those read nothing."""

    def __init__(self, name: str, workspace: auto.LocalWorkspace) -> None:
        super().__init__(name, workspace, StackInitMode.SELECT)

    def outputs(self) -> auto.OutputMap:
        return {}

    def info(self, show_secrets: bool = True) -> auto.UpdateSummary | None:
        now = datetime.now(UTC)
        return auto.UpdateSummary(
            kind="", start_time=now, message="", environment={}, config={}, result=""
        )


class Operation:
    """One operation on ``stack`` of ``project``: see the module."""

    def __init__(
        self,
        stack: str,
        project: str | Path | Project | None = None,
        *,
        on_output: OnOutput | None = None,
        environ: Mapping[str, str] | None = None,
        command: auto.PulumiCommand | None = None,
        shared: SharedListing | None = None,
        on_message: OnOutput | None = None,
    ) -> None:
        """``shared``: the listing of several stacks' owners a report over them counts
        from (``ci-preview``), else the stack's provider lists its owner alone.
        ``on_output`` gets the engine's progress; ``on_message`` the operation's own lines
        (a place passed over, a killed run's lock released, ...), default ``on_output``:
        a caller hiding the progress still shows them."""
        self.stack = stack
        self.project = Project.of(project)
        self.notify: OnOutput = on_output or print_progress
        self.say: OnOutput = on_message or self.notify
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.command = command
        self._making: Future[auto.PulumiCommand] | None = None
        self._shared = shared
        self.read_file()
        self._workspace: auto.LocalWorkspace | None = None
        self._selected: auto.Stack | None = None
        self._state: StackState | None = None
        self._providers: dict[tuple[str, str, tuple[tuple[str, str], ...]], Provider] = {}
        self.recovered = False

    @property
    def root(self) -> Path:
        return self.project.root

    def read_file(self) -> None:
        """Read the stack file (again after a change to it: a resize's new size)."""
        self.path = self.project.stack_file(self.stack)
        self.has_file = self.path.is_file()
        self.settings: Mapping[str, object] = read_yaml(self.path) if self.has_file else {}
        self._config: StackConfig | None = None
        self._deployment: BaseDeployment | None = None
        self._catalogue: tuple[BaseDeployment, Mapping[str, str]] | None = None
        self._runtime: tuple[object, object, StackRuntime | None] | None = None
        self._checked = False

    def config(self) -> StackConfig:
        """The stack file's ``config:`` as the program gets it (secrets not decrypted), once."""
        if self._config is None:
            self._config = config_of(self.stack, self.settings)
        return self._config

    def deployment(self) -> BaseDeployment:
        """The stack file's configuration, validated (secrets not decrypted), parsed once."""
        if self._deployment is None:
            self._deployment = load(self.config(), self.stack)
        return self._deployment

    def catalogue(self, deployment: BaseDeployment) -> Mapping[str, str]:
        """``deployment``'s ``catalogue_env``, made once for the deployment the operation
        holds (the check, the snapshot and the reports all read it)."""
        if self._catalogue is None or self._catalogue[0] is not deployment:
            self._catalogue = (deployment, deployment.catalogue_settings())
        return self._catalogue[1]

    def runtime(
        self, deployment: BaseDeployment | None, outputs: Mapping[str, object]
    ) -> StackRuntime | None:
        """``runtime_of`` the stack, made once for the deployment and outputs it holds."""
        held = self._runtime
        if held is None or held[0] is not deployment or held[1] is not outputs:
            made = runtime_of(self.stack, deployment, outputs, self.catalogue)
            held = self._runtime = (deployment, outputs, made)
        return held[2]

    def check(self) -> BaseDeployment | None:
        """The stack checked before the engine starts (``machines.automation.checks``), once;
        None for a stack without a file."""
        if not self.has_file:
            return None
        deployment = self.deployment()
        if not self._checked:
            state = self.early_state()
            deployed = (
                frozenset()
                if state is None
                else deployed_as_written(deployment, state.outputs, self.catalogue)
            )
            check_deployment(
                self.stack,
                deployment,
                self.config(),
                self.environ,
                self.early_provider,
                deployed=deployed,
                catalogue=self.catalogue,
            )
            self._checked = True
        return deployment

    def start_engine(self) -> None:
        """Begin making the engine's command in a thread (``engine.command_soon``), for an
        operation sure to run the engine: its ``pulumi version`` runs while the stack is
        read and checked."""
        if self.command is None and self._making is None:
            self._making = engine.command_soon()

    def share_engine(self, other: Operation) -> None:
        """Use ``other``'s engine command, made or being made: operations over several
        stacks run one ``pulumi version`` between them."""
        if self.command is None and self._making is None:
            self.command, self._making = other.command, other._making

    def _command(self) -> auto.PulumiCommand | None:
        """The command made so far (waiting for one ``start_engine`` began)."""
        if self.command is None and self._making is not None:
            making, self._making = self._making, None
            self.command = making.result()
        return self.command

    def engine(self, *, need_passphrase: bool = True) -> tuple[auto.PulumiCommand, dict[str, str]]:
        """The operation's one engine command and the variables a run of it gets."""
        self.command, env = engine.engine_command(
            self.stack,
            self.project,
            need_passphrase=need_passphrase,
            settings=self.settings,
            command=self._command(),
        )
        return self.command, env

    def run(self, action: str, *args: str, need_passphrase: bool = False) -> auto.CommandResult:
        """One engine command on the stack (``stack history`` ...), its errors said."""
        command, env = self.engine(need_passphrase=need_passphrase)
        with engine_errors(self.stack, action, self.project):
            return command.run([*args, "--stack", self.stack], str(self.root), env)

    def state(self) -> StackState:
        """The stack's state in its backend, read once (``machines.automation.state``)."""
        if self._state is None:
            self._state = read_state(
                self.project.backend_url(),
                self.project.name,
                self.stack,
                self.root,
                self._export,
            )
        return self._state

    def settle(self, deployment: Mapping[str, object]) -> None:
        """The state after ``deployment`` was imported into the stack."""
        self._state = self.state().settled(deployment)

    def _export(self) -> Mapping[str, object] | None:
        try:
            result = self.run("export", "stack", "export")
        except StackNotFoundError:
            return None
        exported = json.loads(result.stdout or "{}")
        return exported if isinstance(exported, dict) else {}

    def early_state(self) -> StackState | None:
        """The state when it can be read without starting the engine (a ``file://``
        backend), else None: what the checks may read."""
        if self._state is None:

            def engine_needed() -> Mapping[str, object] | None:
                raise _EngineNeeded

            try:
                self._state = read_state(
                    self.project.backend_url(),
                    self.project.name,
                    self.stack,
                    self.root,
                    engine_needed,
                )
            except _EngineNeeded:
                return None
        return self._state

    def selected(self, *, create: bool = False) -> auto.Stack:
        """The stack, once; with ``create``, made first when its stack file exists."""
        if self._selected is not None:
            return self._selected
        if not self.has_file:
            self.engine(need_passphrase=False)
            if not self.state().exists:
                raise StackNotFoundError(
                    f"stack {self.stack} does not exist: it is not in "
                    f"{self.project.backend_url()} and has no stack file "
                    f"{shown(self.path, self.root)} in {self.root}; to make it, copy "
                    "the example of its cloud (stacks/Pulumi.<provider>-example.yaml) to "
                    "that file and edit it, or "
                    f"{WHERE_HINT}"
                )
        space = self.workspace()
        if not self.state().exists:
            if not create:
                raise StackNotFoundError(
                    f"stack {self.stack} does not exist in {self.project.backend_url()}: bring "
                    f"it up first (orca-machines up {self.stack}), or {WHERE_HINT}"
                )
            with engine_errors(self.stack, "select", self.project):
                space.create_stack(self.stack)
            self._state = StackState(exists=True)
        self._selected = OperationStack(self.stack, space)
        return self._selected

    def workspace(self) -> auto.LocalWorkspace:
        """The operation's one workspace (with the passphrase the stack needs)."""
        if self._workspace is None:
            self._workspace = engine.workspace(
                self.stack, self.project, settings=self.settings, command=self._command()
            )
            self.command = self._workspace.pulumi_command
        return self._workspace

    def provider(self, runtime: StackRuntime) -> Provider:
        """The runtime provider of ``runtime``'s settings over the environment (less the
        settings a stack owns, ``stack_environ``), made once, its pools' max counted through
        the stack's fence (``fence_env``)."""
        fenced = {**runtime.env, **fence_env(self.project, self.environ)}
        settings = stack_environ(self.environ, fenced)
        key = (runtime.provider, runtime.owner, tuple(sorted(settings.items())))
        if key not in self._providers:
            self._providers[key] = Provider.of(runtime.provider, runtime.owner, settings)
        return self._providers[key]

    def early_provider(self, deployment: BaseDeployment) -> Provider | None:
        """For the checks: the snapshot's provider when it can be made before the engine
        starts and its settings are the file's, else None (the checks make their own)."""
        state = self.early_state()
        if state is None:
            return None
        try:
            runtime = self.runtime(deployment, state.outputs)
            if runtime is None:
                return None
            catalogue = self.catalogue(deployment)
            if any(runtime.env.get(key) != value for key, value in catalogue.items()):
                return None
            if (runtime.provider, runtime.owner) != (deployment.provider, deployment.owner):
                return None
            return self.provider(runtime)
        except MachinesError:
            return None

    def snapshot(self, deployment: BaseDeployment | None) -> StackSnapshot:
        """The stack now (``machines.automation.snapshot``), from the state read once and
        listed by the operation's provider."""
        outputs = self.state().outputs
        try:
            runtime = self.runtime(deployment, outputs)
            if runtime is None:
                return StackSnapshot(self.stack, deployment, outputs)
            provider = self.provider(runtime)
        except MachinesError as error:
            return StackSnapshot(self.stack, deployment, outputs, refused=error)
        return listed_snapshot(
            self.stack, deployment, outputs, provider, owner=runtime.owner, shared=self._shared
        )

    def runtime_provider(self, deployment: BaseDeployment | None) -> Provider | None:
        """The provider the snapshot lists with (``runtime_of``: the settings the stack
        exported, else its file's), made once; None for a stack of neither."""
        runtime = self.runtime(deployment, self.state().outputs)
        return None if runtime is None else self.provider(runtime)


class _EngineNeeded(Exception):
    """The state cannot be read without the engine."""
