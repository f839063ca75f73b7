"""The moto server the tests run (``testkit/moto_spot.py``) applies one request at a time.

moto's backends share state without locks: two RunInstances in one subnet at once both draw
the subnet's next address from one generator, and one of them may fail with moto's 500 page
(``ValueError: generator already executing``), which the provider rightly calls an answer
that is not EC2's. That failed the threaded EC2 tests now and then under load. Here the
server's application runs in this process, the first launch is held inside moto's address
draw until the second has arrived as far as the server lets it, and no two requests are
ever inside moto together.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any
from urllib.parse import urlencode

import pytest
from moto.ec2.models.subnets import Subnet
from moto.moto_server.werkzeug_app import create_backend_app
from werkzeug.test import Client

from testkit import moto_spot

AUTHORIZATION = (
    "AWS4-HMAC-SHA256 Credential=testing/20250101/eu-central-1/ec2/aws4_request, "
    "SignedHeaders=host, Signature=0"
)
"""What moto reads to route a request to EC2 in eu-central-1 (it checks no signature)."""


class WatchedLock:
    """The server's lock, telling ``arrived`` when a request has to wait for it."""

    def __init__(self, arrived: threading.Event) -> None:
        self._lock = threading.Lock()
        self._arrived = arrived

    def __enter__(self) -> WatchedLock:
        if not self._lock.acquire(blocking=False):
            self._arrived.set()
            self._lock.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lock.release()


def ec2(client: Client, action: str, **params: str) -> tuple[int, str]:
    """An EC2 query request to the application: its status and body."""
    answer = client.post(
        "/",
        data=urlencode({"Action": action, "Version": "2016-11-15", **params}),
        headers={
            "Authorization": AUTHORIZATION,
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    return answer.status_code, answer.get_data(as_text=True)


def between(body: str, tag: str) -> str:
    return body.split(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0]


@pytest.fixture
def app() -> Iterator[Client]:
    """moto's server application as ``moto_spot`` runs it, in this process, emptied after."""
    client = Client(moto_spot.WithInterruptions(create_backend_app))
    yield client
    client.post("/moto-api/reset")


def test_two_launches_in_one_subnet_never_run_inside_moto_together(
    app: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, vpc = ec2(app, "CreateVpc", CidrBlock="10.0.0.0/16")
    _, made = ec2(app, "CreateSubnet", VpcId=between(vpc, "vpcId"), CidrBlock="10.0.1.0/24")
    subnet = between(made, "subnetId")
    arrived = threading.Event()
    monkeypatch.setattr(moto_spot, "ONE_AT_A_TIME", WatchedLock(arrived))
    inside: list[str] = []
    overlapped: list[bool] = []
    first_in = threading.Event()
    draw: Callable[..., str] = Subnet.get_available_subnet_ip

    def held_draw(self: Subnet, instance: Any) -> str:
        """The first launch waits here until the second is inside moto too, or waits for
        the server's lock."""
        me = threading.current_thread().name
        overlapped.append(bool(inside))
        inside.append(me)
        try:
            if me == "first":
                first_in.set()
                arrived.wait()
            else:
                arrived.set()
            return draw(self, instance)
        finally:
            inside.remove(me)

    monkeypatch.setattr(Subnet, "get_available_subnet_ip", held_draw)
    answers: dict[str, tuple[int, str]] = {}

    def launch() -> None:
        name = threading.current_thread().name
        answers[name] = ec2(
            app,
            "RunInstances",
            ImageId="ami-12c6146b",
            MinCount="1",
            MaxCount="1",
            SubnetId=subnet,
        )

    first = threading.Thread(target=launch, name="first")
    second = threading.Thread(target=launch, name="second")
    first.start()
    first_in.wait()
    second.start()
    for thread in (first, second):
        thread.join()

    assert overlapped == [False, False]
    assert [answers[n][0] for n in ("first", "second")] == [200, 200]
    addresses = {between(answers[n][1], "privateIpAddress") for n in ("first", "second")}
    assert len(addresses) == 2
