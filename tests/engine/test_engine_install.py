"""scripts/install-pulumi takes Pulumi's released binaries wherever it can download them.

A release server is faked on loopback (``$ORCA_PULUMI_DOWNLOADS``, the base the install
downloads from): it serves the CLI's release tarball with its sha256 sums, and the hcloud and
aws plugins' tarballs in the layout of Pulumi's plugin server, which the real CLI fetches
through ``pulumi plugin install --server``. The CLI in that tarball is a shell script in front
of this engine's CLI (only its ``version`` answer is the pin's), the plugins are marked shell
scripts. The install runs in a scratch clone with ``PATH=/usr/bin:/bin`` (no Go, no other
``pulumi``) and its own ``HOME``, so nothing can be built and nothing outside is reused.
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from emulator.process import PROJECT_ROOT
from testkit.engine_stacks import pin

pytestmark = pytest.mark.engine


PULUMI, HCLOUD, AWS = pin("pulumi"), pin("pulumi-hcloud"), pin("pulumi-aws")
OS = platform.system().lower()
ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[
    platform.machine().lower()
]
CLI_ARCH = {"amd64": "x64", "arm64": "arm64"}[ARCH]


@dataclass
class Release:
    """A fake Pulumi release server on loopback, and the paths it was asked for."""

    url: str
    root: Path
    asked: list[str] = field(default_factory=list)


def _tarball(path: Path, members: dict[str, str | Path]) -> None:
    """A .tar.gz of text files (str) or symlinks to existing files (Path)."""
    with tarfile.open(path, "w:gz") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            if isinstance(content, Path):
                info.type = tarfile.SYMTYPE
                info.linkname = str(content)
                tar.addfile(info)
            else:
                data = content.encode()
                info.size, info.mode = len(data), 0o755
                tar.addfile(info, io.BytesIO(data))


def _plugin(name: str) -> str:
    return f"#!/bin/sh\n# the official {name} plugin, as the fake release serves it\nexit 1\n"


@pytest.fixture
def release(tmp_path: Path, engine: Path) -> Iterator[Release]:
    """The server, serving the CLI of the pin (a script before this engine's CLI, with this
    engine's Python host) and the official hcloud and aws plugins of the pins."""
    root = tmp_path / "release"
    (root / "sdk").mkdir(parents=True)
    (root / "plugins").mkdir()
    cli = (
        '#!/bin/sh\nif [ "$1" = version ]; then echo v' + PULUMI + "; exit 0; fi\n"
        f'exec {engine.resolve() / "pulumi"} "$@"\n'
    )
    host = {
        f"pulumi/{f}": (engine / f).resolve()
        for f in (
            "pulumi-language-python",
            "pulumi-language-python-exec",
            "pulumi-resource-pulumi-python",
        )
    }
    tarball = root / "sdk" / f"pulumi-v{PULUMI}-{OS}-{CLI_ARCH}.tar.gz"
    _tarball(tarball, {"pulumi/pulumi": cli, **host})
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    (root / "sdk" / f"pulumi-{PULUMI}-checksums.txt").write_text(f"{digest}  {tarball.name}\n")
    for name, version in (("hcloud", HCLOUD), ("aws", AWS)):
        _tarball(
            root / "plugins" / f"pulumi-resource-{name}-v{version}-{OS}-{ARCH}.tar.gz",
            {f"pulumi-resource-{name}": _plugin(name)},
        )

    asked: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            asked.append(self.path)

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Release(f"http://127.0.0.1:{server.server_address[1]}", root, asked)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def scratch_clone(tmp_path: Path) -> Path:
    """What install-pulumi reads of a clone: itself, the pins and the tools' wrappers."""
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    shutil.copy2(PROJECT_ROOT / "scripts" / "install-pulumi", clone / "scripts")
    shutil.copy2(PROJECT_ROOT / "requirements.txt", clone)
    shutil.copytree(PROJECT_ROOT / "tools", clone / "tools")
    return clone


def install(clone: Path, release: Release, *args: str) -> subprocess.CompletedProcess[str]:
    home = clone.parent / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "ORCA_PULUMI_DOWNLOADS": release.url,
        "ORCA_GOPROXY_DIR": str(clone.parent / "no-goproxy"),
    }
    return subprocess.run(
        ["bash", str(clone / "scripts" / "install-pulumi"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def summary(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The summary's lines, by piece."""
    lines = done.stderr.split("install-pulumi: done:\n", 1)[1].splitlines()
    return dict(line.strip().split(": ", 1) for line in lines if ": " in line)


def test_the_install_downloads_the_released_cli_and_official_plugins_over_a_stand_in(
    tmp_path, release
):
    clone = scratch_clone(tmp_path)
    plugins = clone / ".pulumi-engine" / "home" / "plugins"
    # A stand-in left by an earlier install on a machine that could not download.
    old = plugins / f"resource-aws-v{AWS}+orca.standin"
    old.mkdir(parents=True)
    (old / "pulumi-resource-aws").write_text("#!/bin/sh\nexit 1\n")

    done = install(clone, release, "--strict", "--aws-standin")

    assert done.returncode == 0, done.stderr
    got = summary(done)
    assert got["pulumi CLI"] == (
        f"v{PULUMI}, Pulumi's released CLI, downloaded from {release.url}/sdk/ (sha256 checked)"
    )
    assert got["pulumi-language-python"].startswith("Pulumi's own, as released beside the CLI")
    assert got["hcloud provider"] == (
        f"v{HCLOUD}, the official plugin, downloaded "
        f"(pulumi plugin install resource hcloud {HCLOUD})"
    )
    assert got["aws provider"] == (
        f"v{AWS}, the official plugin, downloaded (pulumi plugin install resource aws {AWS})"
    )
    assert "building" not in done.stderr
    assert f"/plugins/pulumi-resource-aws-v{AWS}-{OS}-{ARCH}.tar.gz" in release.asked
    assert (plugins / f"resource-aws-v{AWS}" / "pulumi-resource-aws").read_text() == _plugin("aws")
    assert not old.exists()
    assert not list(plugins.glob("*orca.standin*"))
    assert not (clone / ".pulumi-engine" / "work" / "pulumi-resource-aws").exists()
    bin_ = clone / ".pulumi-engine" / "bin"
    assert (bin_ / "pulumi-language-python").resolve() == (
        clone / ".pulumi-engine" / "dist" / "pulumi" / "pulumi-language-python"
    ).resolve()

    # A rerun asks the server nothing and keeps every piece.
    asked = len(release.asked)
    again = install(clone, release, "--strict", "--aws-standin")
    assert again.returncode == 0, again.stderr
    kept = summary(again)
    assert kept["pulumi CLI"].endswith("(up to date)")
    assert kept["hcloud provider"].endswith("(up to date)")
    assert kept["aws provider"].startswith(f"v{AWS}, already in ")
    assert release.asked[asked:] == []


def test_an_aws_plugin_that_cannot_be_downloaded_is_said_in_one_line_and_nothing_stands_in(
    tmp_path, release
):
    (release.root / "plugins" / f"pulumi-resource-aws-v{AWS}-{OS}-{ARCH}.tar.gz").unlink()
    clone = scratch_clone(tmp_path)

    done = install(clone, release, "--strict")

    assert done.returncode == 0, done.stderr
    line = summary(done)[f"aws provider v{AWS}"]
    assert line.startswith("not installed, because the download is refused (")
    assert "404" in line
    assert line.endswith(f"EC2 stacks need it: pulumi plugin install resource aws {AWS}")
    plugins = clone / ".pulumi-engine" / "home" / "plugins"
    assert not list(plugins.glob("resource-aws-*"))
    assert summary(done)["hcloud provider"].startswith(f"v{HCLOUD}, the official plugin, downl")
    assert os.path.exists(clone / ".pulumi-engine" / "bin" / "pulumi")
