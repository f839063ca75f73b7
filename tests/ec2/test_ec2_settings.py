"""Building the EC2 provider: settings, import boundaries, and a cloud that doesn't answer."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.clouds.ec2.settings import Ec2Settings
from machines.runtime.errors import NOT_THE_API, CloudError, SettingsError
from machines.runtime.provider import Provider
from machines.runtime.settings import Timeouts
from testkit.moto_server import World, free_port
from testkit.specs import ec2_spec

SETTINGS = {
    "AWS_REGION": "eu-central-1",
    "ORCA_EC2_SUBNETS": "eu-central-1a=subnet-0abc,eu-central-1b=subnet-0def",
    "ORCA_EC2_SECURITY_GROUP": "sg-0123",
    "ORCA_EC2_INSTANCE_PROFILE": "orca-workers",
}


def built(owner: str, environ: dict[str, str]) -> Ec2Provider:
    provider = Provider.of("ec2", owner, environ)
    assert isinstance(provider, Ec2Provider)
    return provider


@pytest.mark.parametrize("missing", sorted(SETTINGS))
def test_a_missing_setting_is_named(missing: str) -> None:
    environ = {k: v for k, v in SETTINGS.items() if k != missing}

    with pytest.raises(SettingsError, match=missing):
        Provider.of("ec2", "prod", environ)


def test_the_provider_shows_its_settings() -> None:
    provider = built("prod", SETTINGS)

    assert provider.kind == "ec2"
    assert provider.owner == "prod"
    assert provider.image == ""
    assert provider.subnets == {"eu-central-1a": "subnet-0abc", "eu-central-1b": "subnet-0def"}
    assert provider.security_group == "sg-0123"
    assert provider.instance_profile == "orca-workers"


def test_an_explicit_image_is_the_providers_image() -> None:
    assert built("prod", {**SETTINGS, "ORCA_EC2_IMAGE": "ami-0abc"}).image == "ami-0abc"


def test_aws_region_alone_sets_the_clients_region() -> None:
    provider = built("prod", {**SETTINGS, "AWS_REGION": "eu-north-1"})

    assert provider._client.meta.region_name == "eu-north-1"


def test_aws_default_region_is_the_fallback() -> None:
    environ = {k: v for k, v in SETTINGS.items() if k != "AWS_REGION"}

    provider = built("prod", {**environ, "AWS_DEFAULT_REGION": "eu-west-3"})

    assert provider._client.meta.region_name == "eu-west-3"


def test_aws_endpoint_url_points_the_client_elsewhere() -> None:
    provider = built("prod", {**SETTINGS, "AWS_ENDPOINT_URL": "http://127.0.0.1:4566"})

    assert provider._client.meta.endpoint_url == "http://127.0.0.1:4566"


def test_credentials_in_a_given_environment_are_used() -> None:
    environ = {**SETTINGS, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x" * 40}

    credentials = built("prod", environ)._client._request_signer._credentials

    assert credentials.access_key == "AKIDEXAMPLE"


def test_a_provider_can_be_built_from_settings_directly(ec2_world: World) -> None:
    provider = Ec2Provider(Ec2Settings.from_env(), "prod")

    assert provider.machines("ci") == []


def test_repr_shows_kind_and_owner_and_no_credentials() -> None:
    environ = {**SETTINGS, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t"}

    shown = repr(built("prod", environ))

    assert shown == "Ec2Provider(kind='ec2', owner='prod')"


def quick(endpoint: str) -> Ec2Provider:
    """A provider of an endpoint with one attempt of one second per call."""
    settings = Ec2Settings.from_env(
        {**SETTINGS, "AWS_ENDPOINT_URL": endpoint, "ORCA_EC2_IMAGE": "ami-0abc"}
    ).model_copy(update={"timeouts": Timeouts(request=1, call=1)})
    return Ec2Provider(
        settings, "prod", credentials={"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}
    )


def calls_of(provider: Ec2Provider) -> list[tuple[str, Any]]:
    """The calls that raise for the cloud's trouble (``create`` answers it instead)."""
    return [
        ("arch", lambda: provider.arch("t3.micro")),
        ("machines", lambda: provider.machines("ci")),
        ("delete", lambda: provider.delete("i-0123456789abcdef0")),
    ]


def test_an_endpoint_nobody_listens_on_raises_a_connection_error() -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"

    for name, call in calls_of(quick(endpoint)):
        with pytest.raises(CloudError, match=r"could not be reached") as raised:
            call()
        assert raised.value.code == "connection", name
        assert endpoint in str(raised.value)
        assert raised.value.__cause__ is None
        assert raised.value.__suppress_context__


def test_create_at_an_endpoint_nobody_listens_on_fails_saying_so() -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"

    created = quick(endpoint).create(ec2_spec("ci-1"))

    assert created.failed
    assert "could not be reached" in created.reason
    assert endpoint in created.reason


@pytest.fixture
def not_ec2() -> Iterator[str]:
    """An HTTP server that answers every request with an HTML page."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = b"<!DOCTYPE html><html><body><p>Welcome</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_endpoint_that_is_not_ec2_raises_saying_so(not_ec2: str) -> None:
    for name, call in calls_of(quick(not_ec2)):
        with pytest.raises(CloudError, match="AWS_ENDPOINT_URL an EC2 endpoint") as raised:
            call()
        assert raised.value.code == NOT_THE_API, name


def test_create_at_an_endpoint_that_is_not_ec2_fails_saying_so(not_ec2: str) -> None:
    created = quick(not_ec2).create(ec2_spec("ci-1"))

    assert created.failed
    assert "AWS_ENDPOINT_URL an EC2 endpoint" in created.reason
