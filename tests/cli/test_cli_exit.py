"""The console script ends without the interpreter's teardown (``machines.cli.command``),
and loses nothing by it: the status is ``main``'s, every line is written, exit handlers run,
and output that cannot be written is an error status."""

from __future__ import annotations

import os
import subprocess
import sys

ENTRY = (
    "import atexit, sys; atexit.register(lambda: print('exit handler ran')); "
    "sys.argv = ['orca-machines', *sys.argv[1:]]; "
    "from machines.cli import command; command()"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_status_and_every_line_are_mains_and_exit_handlers_run() -> None:
    done = run("--help")

    assert done.returncode == 0
    assert done.stdout.startswith("usage: orca-machines")
    assert done.stdout.rstrip().endswith("exit handler ran")
    assert "ci-preview" in done.stdout


def test_a_refusal_keeps_its_status_and_its_line() -> None:
    done = run("preview")

    assert done.returncode == 64
    assert "orca-machines" in done.stderr


def test_output_that_cannot_be_written_is_an_error_status() -> None:
    """The help (buffered: it fits the buffer) meets a reader already gone at the flush:
    the command starts once its input ends, after the reader has closed."""
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read(); " + ENTRY, "--help"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=buffered,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdout.close()
        process.stdin.close()
        code = process.wait(timeout=120)

    assert code == 1
