"""``orca-machines preview``, ``up`` and ``ci-preview`` of unchanged stacks side by side with
plain ``pulumi`` doing the same, in one run: wall time, requests to the cloud and ``pulumi``
processes started (issue 30's "Measured").

Two Hetzner stacks of ``--servers`` servers each (a firewall, one pool; the first also an
SSH key: a cloud project holds one key of a fingerprint) are
brought up once against the emulator; then, ``--pairs`` times, each operation runs once
ours and once plain, the order alternating from pair to pair so the shared machine's load
falls on both sides alike:

* ``orca-machines preview A -q``  against ``pulumi preview --refresh --stack A``, and the
  same preview run through the Automation API's ``PulumiCommand`` by a one-line script
  (``AUTOMATION_ALONE``: the least any Python process that drives the engine through the
  Automation API pays, nothing of this project loaded)
* ``orca-machines up A``          against ``pulumi up --refresh --yes --stack A``
* ``orca-machines ci-preview --base B --stacks A,B -q`` (a commit touching the program, so
  both stacks are affected) against ``pulumi preview --refresh`` of A, then of B.

Requests are the emulator's own count (what crossed the wire). ``pulumi`` processes are
counted by a wrapper named ``pulumi`` in a copy of the engine's ``bin`` (the other binaries
linked): it appends its arguments to a file and execs the real binary. Both sides run that
same wrapper: plain ``pulumi`` finds it first on ``PATH``; the CLI runs in a child
interpreter whose engine directory points at the copy (the CLI takes the checkout's
``.pulumi-engine/bin`` before ``PATH``, so it would bypass a wrapper on ``PATH`` alone).

    python -m bench.operations [--pairs 5] [--servers 6] [--action-seconds 0.05]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bench.engine_up import PASSPHRASE, stack_file
from emulator.process import Emulator, running_emulator
from machines import automation
from testkit.hetzner import TOKEN

STACKS = ("ops-a", "ops-b")
WRAPPER = """#!/bin/sh
printf '%s\\n' "$*" >> {log}
exec {real} "$@"
"""
# The CLI as its console script runs it, with the engine's directory moved to the copy
# holding the counting wrapper: argv[1] is that copy's checkout, the rest the CLI's words.
CLI = (
    "import sys, pathlib; import machines.automation.engine as e; "
    "e.CHECKOUT = pathlib.Path(sys.argv[1]); sys.argv[1:2] = []; "
    "from machines.cli import command; command()"
)
# The least a Python process driving the same preview through the Automation API takes:
# the SDK imported, its ``PulumiCommand`` made (its ``pulumi version``, which the SDK always
# runs) and the preview run by it, nothing of this project loaded and no stack selected,
# ending as the CLI does (no teardown). argv[1] is the engine's root (its ``bin`` holds the
# counting wrapper), argv[2] the stack.
AUTOMATION_ALONE = (
    "import os, sys; from pulumi import automation as auto; "
    "command = auto.PulumiCommand(root=sys.argv[1]); "
    "done = command.run(['preview', '--refresh', '--stack', sys.argv[2]], os.getcwd(), "
    "dict(os.environ)); "
    "sys.stdout.flush(); os._exit(done.code)"
)
TWO_WORD = {"stack", "config", "plugin"}
OURS, PLAIN, ALONE = "orca-machines", "plain pulumi", "Automation API alone"


@dataclass
class Run:
    """One side's run of one operation."""

    seconds: float
    requests: int
    spawned: Counter[str]
    codes: list[int]
    routes: dict[str, int]


@dataclass
class Side:
    """Every run of one side of one operation."""

    runs: list[Run] = field(default_factory=list)

    def median_seconds(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    def requests(self) -> str:
        counts = sorted({r.requests for r in self.runs})
        return str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"

    def median_requests(self) -> float:
        return statistics.median(r.requests for r in self.runs)

    def spawned(self) -> tuple[int, str]:
        """Processes of the last run, by subcommand (a note when the runs differ)."""
        last = self.runs[-1].spawned
        text = ", ".join(f"{cmd} x{n}" for cmd, n in sorted(last.items()))
        if any(r.spawned != last for r in self.runs):
            text += " (runs differ)"
        return sum(last.values()), text

    def routes(self) -> str:
        """Requests of the last run, by route."""
        return ", ".join(f"{route} x{n}" for route, n in sorted(self.runs[-1].routes.items()))


def subcommand(line: str) -> str:
    """``stack output --json --stack x``: ``stack output``; ``preview --yes``: ``preview``."""
    words = [w for w in line.split() if not w.startswith("-")]
    if not words:
        return "(none)"
    if words[0] in TWO_WORD and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0]


class Bench:
    """The project copy, the counting engine, the emulator and the two sides' commands."""

    def __init__(self, root: Path, emulator: Emulator) -> None:
        self.emulator = emulator
        self.log = root / "pulumi-processes.log"
        self.checkout = root / "engine"
        self.project = automation.copy_project(root / "project")
        real = automation.engine_bin()
        if real is None:
            raise SystemExit(f"no Pulumi engine: {automation.INSTALL_HINT}")
        self.bin = self.checkout / automation.ENGINE_DIR / "bin"
        self.bin.mkdir(parents=True)
        for binary in real.iterdir():
            if binary.name != "pulumi":
                (self.bin / binary.name).symlink_to(binary)
        wrapper = self.bin / "pulumi"
        wrapper.write_text(WRAPPER.format(log=self.log, real=real / "pulumi"))
        wrapper.chmod(0o755)
        (root / "state").mkdir()
        home = os.environ.get(automation.PULUMI_HOME) or str(
            automation.CHECKOUT / automation.ENGINE_DIR / "home"
        )
        self.env = {
            **os.environ,
            "PATH": os.pathsep.join([str(self.bin), os.environ.get("PATH", "")]),
            automation.ORCA_PULUMI_PROJECT: str(self.project),
            automation.PULUMI_BACKEND_URL: (root / "state").as_uri(),
            automation.PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
            automation.PULUMI_HOME: home,
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "HCLOUD_TOKEN": TOKEN,
        }

    def ours(self, *args: str) -> list[str]:
        return [sys.executable, "-c", CLI, str(self.checkout), *args]

    def plain(self, *args: str) -> list[str]:
        return [str(self.bin / "pulumi"), *args]

    def automation_alone(self, stack: str) -> list[str]:
        return [sys.executable, "-c", AUTOMATION_ALONE, str(self.bin.parent), stack]

    def run(self, commands: Sequence[list[str]]) -> Run:
        """Run ``commands`` one after the other; what they cost together."""
        self.log.write_text("")
        self.emulator.control.reset_requests()
        codes = []
        start = time.perf_counter()
        for command in commands:
            done = subprocess.run(
                command,
                cwd=self.project,
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                check=False,
                timeout=600,
            )
            codes.append(done.returncode)
            if done.returncode != 0:
                said = (done.stderr or done.stdout).strip().splitlines()[-5:]
                print(f"  exit {done.returncode}: {' '.join(command[-4:])}: {said}", flush=True)
        seconds = time.perf_counter() - start
        counts = self.emulator.control.requests()
        lines = self.log.read_text().splitlines()
        spawned = Counter(subcommand(line) for line in lines)
        return Run(seconds, counts.total, spawned, codes, dict(counts.routes))

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.project), *args],
            capture_output=True,
            text=True,
            check=True,
            env={
                **self.env,
                "GIT_AUTHOR_NAME": "bench",
                "GIT_AUTHOR_EMAIL": "bench@orca",
                "GIT_COMMITTER_NAME": "bench",
                "GIT_COMMITTER_EMAIL": "bench@orca",
            },
        ).stdout.strip()

    def set_up(self, servers: int) -> str:
        """Both stacks up; the project committed, then a commit touching the program (so
        ``ci-preview`` previews both); the base revision."""
        for stack in STACKS:
            settings = yaml.safe_load(stack_file(servers, self.emulator.url))
            if stack != STACKS[0]:  # a cloud project holds one key of a fingerprint
                del settings["config"]["orca-machines:sshKeys"]
            (self.project / "stacks" / f"Pulumi.{stack}.yaml").write_text(
                yaml.safe_dump(settings, sort_keys=False)
            )
            first = self.run([self.ours("up", stack, "-q")])
            if first.codes != [0]:
                raise SystemExit(f"up of {stack} failed")
        (self.project / ".gitignore").write_text(".venv\n.pulumi-state\n")
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "base")
        base = self.git("rev-parse", "HEAD")
        with (self.project / "__main__.py").open("a") as main:
            main.write("\n# a change to the program: every stack is affected\n")
        self.git("commit", "-q", "-am", "head")
        return base


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--servers", type=int, default=6)
    parser.add_argument(
        "--action-seconds", type=float, default=0.05, help="how long each emulated action runs"
    )
    args = parser.parse_args()
    seconds = str(args.action_seconds)
    with (
        tempfile.TemporaryDirectory(prefix="bench-operations-") as tmp,
        running_emulator(TOKEN, "--boot-seconds", seconds, "--action-seconds", seconds) as emu,
    ):
        bench = Bench(Path(tmp), emu)
        print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)
        base = bench.set_up(args.servers)
        a, b = STACKS
        operations: dict[str, list[tuple[str, list[list[str]]]]] = {
            "preview": [
                (OURS, [bench.ours("preview", a, "-q")]),
                (PLAIN, [bench.plain("preview", "--refresh", "--stack", a)]),
                (ALONE, [bench.automation_alone(a)]),
            ],
            "up": [
                (OURS, [bench.ours("up", a)]),
                (PLAIN, [bench.plain("up", "--refresh", "--yes", "--stack", a)]),
            ],
            "ci-preview (2 stacks)": [
                (
                    OURS,
                    [
                        bench.ours(
                            "ci-preview",
                            "--base",
                            base,
                            "--stacks",
                            f"{a},{b}",
                            "-q",
                            "--markdown",
                            str(Path(tmp) / "comment.md"),
                        )
                    ],
                ),
                (PLAIN, [bench.plain("preview", "--refresh", "--stack", s) for s in STACKS]),
            ],
        }
        results = {
            name: {label: Side() for label, _ in sides} for name, sides in operations.items()
        }
        for pair in range(args.pairs):
            for name, sides in operations.items():
                for label, commands in sides if pair % 2 == 0 else reversed(sides):
                    results[name][label].runs.append(bench.run(commands))
            print(f"pair {pair + 1} of {args.pairs} done", flush=True)
        print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
        report(results, args)
    return 0


def report(results: dict[str, dict[str, Side]], args: argparse.Namespace) -> None:
    print(f"\n{args.servers} servers a stack, medians of {args.pairs} alternating pairs\n")
    print("| operation | side | wall (median) | requests | `pulumi` started | exit codes |")
    print("| --- | --- | ---: | ---: | --- | --- |")
    for name, sides in results.items():
        for label, side in sides.items():
            count, spawned = side.spawned()
            codes = sorted({tuple(r.codes) for r in side.runs})
            print(
                f"| {name} | {label} | {side.median_seconds():.2f} s | {side.requests()} | "
                f"{count}: {spawned} | {codes} |"
            )
    print("\n| operation | time ours / plain | requests ours - plain | `pulumi` ours / plain |")
    print("| --- | ---: | ---: | ---: |")
    for name, sides in results.items():
        ours, plain = sides[OURS], sides[PLAIN]
        ratio = ours.median_seconds() / plain.median_seconds()
        extra = ours.median_requests() - plain.median_requests()
        print(
            f"| {name} | {ratio:.2f}x | {extra:+g} | {ours.spawned()[0]} / {plain.spawned()[0]} |"
        )
    floors = {name: sides for name, sides in results.items() if ALONE in sides}
    if floors:
        print("\n| operation | Automation API alone / plain | ours / Automation API alone |")
        print("| --- | ---: | ---: |")
        for name, sides in floors.items():
            alone = sides[ALONE].median_seconds()
            print(
                f"| {name} | {alone / sides[PLAIN].median_seconds():.2f}x | "
                f"{sides[OURS].median_seconds() / alone:.2f}x |"
            )
    print("\n| operation | side | requests by route (last pair) |")
    print("| --- | --- | --- |")
    for name, sides in results.items():
        for label, side in sides.items():
            print(f"| {name} | {label} | {side.routes()} |")


if __name__ == "__main__":
    raise SystemExit(main())
