"""Which pools the check before the engine leaves unasked: those the stack's state holds as
its file has them (``checks.deployed_as_written``), so an unchanged stack's preview sends the
cloud nothing first, and anything changed or new is asked as before."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from machines.automation.checks import (
    check_deployment,
    config_of,
    deployed_as_written,
    deployment_from,
)
from machines.program.config.models import BaseDeployment
from machines.runtime.errors import SettingsError
from testkit.moto_server import free_port

LOCAL = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.local.yaml"


def settings(**changes: Any) -> dict[str, Any]:
    """The local stack's file, its pools changed by ``changes`` (pool name -> keys)."""
    read = yaml.safe_load(LOCAL.read_text(encoding="utf-8"))
    for pool in read["config"]["orca-machines:pools"]:
        pool.update(changes.get(pool["name"], {}))
    return read


def deployment(**changes: Any) -> BaseDeployment:
    return deployment_from("local", settings(**changes))


def outputs_of(deployed: BaseDeployment) -> dict[str, Any]:
    """The outputs a stack brought up with ``deployed`` has, as the program exports them."""
    return {
        "provider": deployed.provider,
        "owner": deployed.owner,
        "env": deployed.runtime_env(deployed.catalogue_env()),
        "pools": {
            p.name: {"machineType": p.machine_type, "location": p.location, "size": p.size}
            for p in deployed.pools
        },
    }


def test_an_unchanged_stack_asks_about_no_pool() -> None:
    assert deployed_as_written(deployment(), outputs_of(deployment())) == {"x86", "arm"}


def test_a_changed_type_location_or_a_larger_size_is_asked_again() -> None:
    outputs = outputs_of(deployment())

    assert deployed_as_written(deployment(x86={"machineType": "cx33"}), outputs) == {"arm"}
    assert deployed_as_written(deployment(arm={"location": "nbg1"}), outputs) == {"x86"}
    assert deployed_as_written(deployment(x86={"size": 3}), outputs) == {"arm"}
    assert deployed_as_written(deployment(x86={"size": 1}), outputs) == {"x86", "arm"}


def test_a_new_pool_or_another_image_is_asked_again() -> None:
    outputs = outputs_of(deployment())
    grown = settings()
    pools = grown["config"]["orca-machines:pools"]
    pools.append({**copy.deepcopy(pools[0]), "name": "more"})
    imaged = settings()
    imaged["config"]["orca-machines:image"] = "debian-12"

    assert deployed_as_written(deployment_from("local", grown), outputs) == {"x86", "arm"}
    assert deployed_as_written(deployment_from("local", imaged), outputs) == frozenset()


def test_outputs_that_do_not_say_leave_every_pool_asked() -> None:
    assert deployed_as_written(deployment(), {}) == frozenset()
    assert deployed_as_written(deployment(), {"env": {}, "pools": {}}) == frozenset()
    secret = {**outputs_of(deployment()), "env": "[secret]"}
    assert deployed_as_written(deployment(), secret) == frozenset()


def test_the_provider_settings_are_still_refused_when_every_pool_is_as_deployed() -> None:
    """Only the pool questions are skipped: a bad setting of an unchanged stack (a short
    token) is still refused before the engine, in the line that names it."""
    written = deployment()

    with pytest.raises(SettingsError, match="HCLOUD_TOKEN"):
        check_deployment(
            "local",
            written,
            config_of("local", settings()),
            {"HCLOUD_TOKEN": "short"},
            deployed=deployed_as_written(written, outputs_of(written)),
        )


def test_an_unchanged_stack_is_checked_without_asking_the_cloud() -> None:
    """With every pool as deployed the check sends nothing: the stack's endpoint here is a
    port no server listens on, and the check still passes."""
    closed = settings()
    closed["config"]["hcloud:endpoint"] = f"http://127.0.0.1:{free_port()}/v1"
    written = deployment_from("local", closed)

    check_deployment(
        "local",
        written,
        config_of("local", closed),
        {"HCLOUD_TOKEN": "x" * 64},
        deployed=deployed_as_written(written, outputs_of(written)),
    )
