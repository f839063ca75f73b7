"""A stack's state is read once per operation: a ``file://`` backend's checkpoint as a file,
without the engine; any other backend through one ``pulumi stack export``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from machines.automation.state import checkpoint_files, read_state

PROJECT = "orca-machines"
DEPLOYMENT = {
    "resources": [
        {
            "urn": "urn:pulumi:prod::orca-machines::pulumi:pulumi:Stack::orca-machines-prod",
            "type": "pulumi:pulumi:Stack",
            "outputs": {
                "owner": "prod",
                "env": {
                    "HCLOUD_ENDPOINT": "http://127.0.0.1:4000/v1",
                    "TOKEN": {
                        "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
                        "ciphertext": "v1:abc",
                    },
                },
            },
        }
    ],
    "pending_operations": [],
}


def never_exported() -> None:
    raise AssertionError("the engine was asked for a file:// backend's state")


def write_checkpoint(path: Path, *, compressed: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"version": 3, "checkpoint": {"stack": "prod", "latest": DEPLOYMENT}})
    path.write_bytes(gzip.compress(text.encode()) if compressed else text.encode())


@pytest.mark.parametrize("name", ["prod.json", "prod.json.gz"])
def test_a_file_backends_checkpoint_is_read_without_the_engine(tmp_path: Path, name: str):
    write_checkpoint(tmp_path / ".pulumi" / "stacks" / PROJECT / name, compressed="gz" in name)

    state = read_state(tmp_path.as_uri(), PROJECT, "prod", tmp_path, never_exported)

    assert state.exists
    assert state.version == 3
    assert state.outputs == {
        "owner": "prod",
        "env": {"HCLOUD_ENDPOINT": "http://127.0.0.1:4000/v1", "TOKEN": "[secret]"},
    }


def test_a_file_backend_without_the_checkpoint_holds_no_such_stack(tmp_path: Path):
    state = read_state(tmp_path.as_uri(), PROJECT, "prod", tmp_path, never_exported)

    assert not state.exists
    assert state.outputs == {}


def test_another_backend_is_asked_through_the_engine_once(tmp_path: Path):
    asked: list[str] = []

    def export() -> dict[str, object]:
        asked.append("export")
        return {"version": 3, "deployment": DEPLOYMENT}

    state = read_state("s3://bucket", PROJECT, "prod", tmp_path, export)

    assert asked == ["export"]
    assert state.outputs["owner"] == "prod"
    assert not read_state("s3://bucket", PROJECT, "nope", tmp_path, lambda: None).exists


def test_relative_and_home_file_urls_are_read_where_the_engine_reads_them(tmp_path: Path):
    assert checkpoint_files("file://./state", PROJECT, "org/prod", tmp_path)[0] == (
        tmp_path / "." / "state" / ".pulumi" / "stacks" / PROJECT / "prod.json"
    )
    assert checkpoint_files("file://~/state", PROJECT, "prod", tmp_path)[0] == (
        Path.home() / "state" / ".pulumi" / "stacks" / PROJECT / "prod.json"
    )
    assert checkpoint_files("file://elsewhere/state", PROJECT, "prod", tmp_path) == []
