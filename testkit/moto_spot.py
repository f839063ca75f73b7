"""moto's server with two things moto lacks: EC2 taking a spot instance back, and one
request at a time.

Run as a script in place of ``python -m moto.server`` (same arguments). ``POST
/orca-test/spot-interruption`` with ``InstanceId`` (and ``Region``) in a form body ends that
spot instance as EC2 does on an interruption that terminates: the instance is terminated and
its state reason is ``Server.SpotInstanceTermination``. moto itself only ever terminates
with ``Client.UserInitiatedShutdown``.

moto's server answers each connection in a thread of its own, but its backends are not
safe to share between threads: two RunInstances at once in one subnet both draw the
subnet's next private address from one generator, and one of them fails with a 500 page
(``ValueError: generator already executing``) that is not EC2's answer at all. EC2 applies
each request whole, so this server runs moto's handling of one request at a time
(``ONE_AT_A_TIME``), its answer included, while connections are still read and written in
their threads. It imports nothing of this project: the server runs from any directory.
"""

from __future__ import annotations

import threading
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

ONE_AT_A_TIME = threading.Lock()
"""Held while moto handles a request and renders its answer: moto's backends share state
without locks of their own."""


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
    """moto's application, one request at a time, answering the interruption path itself."""

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        with ONE_AT_A_TIME:
            if (
                environ.get("PATH_INFO") == INTERRUPTION_PATH
                and environ["REQUEST_METHOD"] == "POST"
            ):
                return self._interruption(environ, start_response)
            return _whole(super().__call__(environ, start_response))

    @staticmethod
    def _interruption(
        environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        form = parse_qs(environ["wsgi.input"].read(length).decode())
        instance_id = form.get("InstanceId", [""])[0]
        region = form.get("Region", ["eu-central-1"])[0]
        status, text = interrupt(instance_id, region)
        start_response(
            f"{status} {'OK' if status == 200 else 'Error'}", [("Content-Type", "text/plain")]
        )
        return [text.encode()]


def _whole(answer: Iterable[bytes]) -> list[bytes]:
    """An answer's body read to its end (and the answer closed, as WSGI asks), so moto
    renders it inside the lock rather than while the server writes it out."""
    try:
        return [b"".join(answer)]
    finally:
        close = getattr(answer, "close", None)
        if close is not None:
            close()


if __name__ == "__main__":
    server.DomainDispatcherApplication = WithInterruptions  # type: ignore[attr-defined]
    server.main()
