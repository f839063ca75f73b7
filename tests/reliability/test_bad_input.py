"""Bad input on both clouds: one clear error that says what to fix, and nothing made half-way.

What tests/unit, tests/contract, tests/hetzner and tests/ec2 already prove is not repeated
here: malformed names and pools (refused by MachineSpec), unknown types and locations,
malformed ids and owners, a wrong Hetzner token on listing, and endpoints that answer a web
page.
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from emulator.process import Emulator
from machines.runtime.errors import CloudError, SettingsError
from testkit import moto_server
from testkit.clouds import Cloud
from testkit.moto_server import ZONES

SPACES = "spaces or a line break"


@pytest.mark.parametrize(
    ("cloud", "variable", "value", "fix"),
    [
        ("hetzner", "HCLOUD_ENDPOINT", " {endpoint}", SPACES),
        ("hetzner", "ORCA_HCLOUD_IMAGE", "ubuntu-24.04 ", SPACES),
        ("hetzner", "ORCA_HCLOUD_FIREWALL", "workers\n", SPACES),
        ("hetzner", "ORCA_HCLOUD_SSH_KEYS", "ops,,ci", "empty item"),
        ("hetzner", "ORCA_HCLOUD_SSH_KEYS", "ops, ci", "spaces around it"),
        ("hetzner", "ORCA_CALL_TIMEOUT", "5 ", SPACES),
        ("ec2", "AWS_REGION", "eu-central-1 ", SPACES),
        ("ec2", "AWS_ENDPOINT_URL", "{endpoint}\n", SPACES),
        ("ec2", "ORCA_EC2_SUBNETS", "eu-central-1a=subnet-1,", "empty item"),
        ("ec2", "ORCA_EC2_SUBNETS", "eu-central-1a=subnet-1, eu-central-1b=subnet-2", "spaces"),
        ("ec2", "ORCA_EC2_SUBNETS", "eu-central-1a = subnet-1", "is not LOCATION=ID"),
        ("ec2", "ORCA_EC2_SECURITY_GROUP", " sg-1", SPACES),
        ("ec2", "ORCA_EC2_INSTANCE_PROFILE", "workers ", SPACES),
        ("ec2", "ORCA_REQUEST_TIMEOUT", "\t2", SPACES),
    ],
    indirect=["cloud"],
)
def test_a_setting_with_stray_spaces_or_empty_items_is_refused_naming_it(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, fix: str
) -> None:
    endpoint = os.environ["HCLOUD_ENDPOINT" if cloud.kind == "hetzner" else "AWS_ENDPOINT_URL"]
    monkeypatch.setenv(variable, value.format(endpoint=endpoint))

    with pytest.raises(SettingsError, match=fix) as refused:
        cloud.provider()

    assert variable in str(refused.value)
    assert cloud.live() == []


def test_an_unknown_hetzner_location_fails_naming_it(hetzner_cloud: Cloud) -> None:
    cloud = hetzner_cloud

    created = cloud.provider().create(cloud.spec(location="mars1"))

    assert created.failed
    assert (
        created.reason == "Hetzner does not offer cx23 in 'mars1': it is sold in fsn1, hel1, nbg1"
    )
    assert cloud.live() == []


@pytest.mark.parametrize(
    ("variable", "value", "code"),
    [
        ("ORCA_EC2_SECURITY_GROUP", "sg-0123456789abcdef0", "InvalidGroup.NotFound"),
        ("ORCA_EC2_SUBNETS", f"{ZONES[0]}=subnet-0123456789abcdef0", "InvalidSubnetID.NotFound"),
        ("ORCA_EC2_INSTANCE_PROFILE", "nobody", "NoSuchEntity"),
        ("ORCA_EC2_IMAGE", "ami-0123456789abcdef0", "InvalidAMIID.NotFound"),
    ],
)
def test_an_ec2_resource_named_in_a_setting_that_does_not_exist_fails_naming_the_setting(
    ec2_cloud: Cloud, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, code: str
) -> None:
    monkeypatch.setenv(variable, value)

    created = ec2_cloud.provider().create(ec2_cloud.spec())

    assert created.failed
    assert code in created.reason
    assert created.reason.endswith(f"check {variable}")
    assert ec2_cloud.live() == []


def test_a_wrong_hetzner_token_fails_create_saying_so(
    hetzner_cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "w" * 64
    monkeypatch.setenv("HCLOUD_TOKEN", wrong)
    cloud = hetzner_cloud

    created = cloud.provider().create(cloud.spec())

    assert created.failed
    assert "unauthorized" in created.reason
    assert "check HCLOUD_TOKEN" in created.reason
    assert wrong not in created.reason
    assert cloud.live() == []


@contextmanager
def checked_credentials(moto: moto_server.MotoServer) -> Iterator[None]:
    """moto checks signatures against its IAM users inside the block (it knows none)."""

    def reset_auth(count: str) -> None:
        request = urllib.request.Request(
            f"{moto.url}/moto-api/reset-auth",
            data=count.encode(),
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        with urllib.request.urlopen(request, timeout=10):
            pass

    reset_auth("0")
    try:
        yield
    finally:
        reset_auth("inf")


WRONG_SECRET = "wrongS3cr3tKEYwrongS3cr3tKEYwrongS3cr3t"


def test_wrong_aws_credentials_are_one_clear_error(
    ec2_cloud: Cloud, moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG0")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", WRONG_SECRET)

    with (
        checked_credentials(moto),
        pytest.raises(CloudError, match="AuthFailure.*check the credentials") as refused,
    ):
        ec2_cloud.provider().machines("ci")

    assert refused.value.code == "AuthFailure"
    assert WRONG_SECRET not in str(refused.value)


def test_wrong_aws_credentials_fail_create_and_launch_nothing(
    ec2_cloud: Cloud, moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG0")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", WRONG_SECRET)

    with checked_credentials(moto):
        created = ec2_cloud.provider().create(ec2_cloud.spec())

    assert created.failed
    assert "check the credentials" in created.reason
    assert WRONG_SECRET not in created.reason
    assert ec2_cloud.live() == []


def test_hcloud_endpoint_at_another_cloud_is_one_clear_error(
    hetzner_cloud: Cloud, moto: moto_server.MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HCLOUD_ENDPOINT", moto.url)
    cloud = hetzner_cloud

    with pytest.raises(CloudError, match="HTTP 404 without a Hetzner API error.*HCLOUD_ENDPOINT"):
        cloud.provider().machines("ci")

    assert cloud.live() == []


def test_aws_endpoint_at_another_cloud_is_one_clear_error(
    ec2_cloud: Cloud, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", emulator.url)

    created = ec2_cloud.provider().create(ec2_cloud.spec())

    assert created.failed
    assert "is AWS_ENDPOINT_URL an EC2 endpoint?" in created.reason
    assert ec2_cloud.live() == []
