"""A process serving the runtime's metrics for Prometheus, and its endpoint scraped over HTTP.

``serving(args)`` starts ``python ARGS`` (``-m machines metrics ...`` or ``-m
testkit.workload``) from the checkout with this process's environment; the child's first line
names its endpoint, and every later line is an event the test waits for (a round listed, a
workload done), so no wait depends on a short timeout. The child is terminated at the end.
"""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from emulator.process import PROJECT_ROOT

SERVING = re.compile(r"serving metrics on (http://\S+/metrics)")
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ", flags=re.MULTILINE)


class Endpoint:
    """The child serving metrics: its lines as they come, and its endpoint."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process
        first = self.line()
        found = SERVING.search(first)
        if found is None:
            raise AssertionError(f"the metrics process said {first!r}, not where it serves")
        self.url = found.group(1)

    def line(self) -> str:
        """The child's next line of output (the event); its errors when it ended instead."""
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self._process.wait(timeout=60)
            assert self._process.stderr is not None
            raise AssertionError(
                f"the metrics process ended ({self._process.returncode}): "
                f"{self._process.stderr.read()}"
            )
        return line.rstrip("\n")

    def scrape(self) -> str:
        """The Prometheus text the endpoint serves now."""
        with urllib.request.urlopen(self.url, timeout=60) as answer:
            assert answer.status == 200
            assert answer.headers.get_content_type() == "text/plain"
            text: str = answer.read().decode()
            return text


def samples(text: str) -> list[tuple[str, str]]:
    """(series name, labels) of each sample of a scrape."""
    return [(m.group(1), m.group(2) or "") for m in SAMPLE.finditer(text)]


@contextmanager
def serving(args: Sequence[str]) -> Iterator[Endpoint]:
    """``python ARGS`` serving metrics until the block ends."""
    process = subprocess.Popen(
        [sys.executable, *args],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield Endpoint(process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        finally:
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
