"""moto's server with one thing moto does not model: EC2 taking a spot instance back.

Run as a script in place of ``python -m moto.server`` (same arguments). ``POST
/orca-test/spot-interruption`` with ``InstanceId`` (and ``Region``) in a form body ends that
spot instance as EC2 does on an interruption that terminates: the instance is terminated and
its state reason is ``Server.SpotInstanceTermination``. moto itself only ever terminates
with ``Client.UserInitiatedShutdown``. It imports nothing of this project: the server runs
from any directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from moto import server
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.ec2.models.instances import StateReason
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

INTERRUPTION_PATH = "/orca-test/spot-interruption"
SPOT_INTERRUPTION = "Server.SpotInstanceTermination"


def interrupt(instance_id: str, region: str) -> tuple[int, str]:
    """End a spot instance as an interruption does; the status and a line saying what."""
    backend = ec2_backends[DEFAULT_ACCOUNT_ID][region]
    instance = backend.get_instance_by_id(instance_id)
    if instance is None:
        return 404, f"no instance {instance_id} in {region}"
    if instance.lifecycle != "spot":
        return 400, f"instance {instance_id} is not a spot instance: EC2 never interrupts it"
    instance.terminate()
    instance.state_reason = StateReason(
        f"{SPOT_INTERRUPTION}: Spot instance termination", SPOT_INTERRUPTION
    )
    instance._reason = "Service initiated (spot interruption)"
    return 200, f"instance {instance_id} interrupted"


class WithInterruptions(DomainDispatcherApplication):
    """moto's application, answering the interruption path itself."""

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != INTERRUPTION_PATH or environ["REQUEST_METHOD"] != "POST":
            return super().__call__(environ, start_response)  # type: ignore[no-any-return]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        form = parse_qs(environ["wsgi.input"].read(length).decode())
        instance_id = form.get("InstanceId", [""])[0]
        region = form.get("Region", ["eu-central-1"])[0]
        status, text = interrupt(instance_id, region)
        start_response(
            f"{status} {'OK' if status == 200 else 'Error'}", [("Content-Type", "text/plain")]
        )
        return [text.encode()]


if __name__ == "__main__":
    server.DomainDispatcherApplication = WithInterruptions  # type: ignore[attr-defined]
    server.main()
