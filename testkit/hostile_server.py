"""A hostile HTTP endpoint on loopback: it answers every request the way a test tells it to.

Not a cloud: a stand-in for what sits at a wrong or broken endpoint URL (a web page, a proxy's
error, an empty or truncated body, a body that trickles in a byte at a time, a connection
reset half way through the body). Both providers are pointed at it to prove that no such
answer is ever believed.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

Kind = Literal["answer", "trickle", "reset"]


EC2_SETTINGS = {
    "AWS_REGION": "eu-central-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "ORCA_EC2_SUBNETS": "eu-central-1a=subnet-0abc",
    "ORCA_EC2_SECURITY_GROUP": "sg-0123",
    "ORCA_EC2_INSTANCE_PROFILE": "orca-workers",
    "ORCA_EC2_IMAGE": "ami-0123456789abcdef0",
}
"""Settings of an EC2 provider that needs nothing of the endpoint before its first call;
add ``AWS_ENDPOINT_URL`` of the hostile server."""


@dataclass(frozen=True)
class Answer:
    """What the endpoint sends back to every request.

    - ``answer``: ``status`` with ``body`` at once;
    - ``trickle``: ``status`` and the headers at once, then ``body`` one byte every
      ``interval`` seconds (its Content-Length is right: a patient client gets it all);
    - ``reset``: the headers and the first half of ``body``, then a TCP reset.
    """

    kind: Kind = "answer"
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    interval: float = 0.0


HTML = Answer(
    body=b"<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>",
    content_type="text/html",
)
EMPTY = Answer(body=b"")


def json_answer(body: str, status: int = 200) -> Answer:
    return Answer(status=status, body=body.encode())


def xml_answer(body: str, status: int = 200) -> Answer:
    return Answer(status=status, body=body.encode(), content_type="text/xml")


class HostileServer:
    """A real HTTP server on 127.0.0.1 that gives every request ``answer``.

    ``requests`` counts the requests that arrived; ``answer`` may be changed between calls.
    """

    def __init__(self) -> None:
        self.answer = Answer()
        self.requests = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer_with(self, answer: Answer) -> None:
        with self._lock:
            self.answer = answer
            self.requests = 0

    def _next(self) -> Answer:
        with self._lock:
            self.requests += 1
            return self.answer

    @contextmanager
    def serving(self) -> Iterator[HostileServer]:
        thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


def _handler_for(server: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Hostile(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            self.hostile()

        def do_POST(self) -> None:
            self.hostile()

        def do_PUT(self) -> None:
            self.hostile()

        def do_DELETE(self) -> None:
            self.hostile()

        def hostile(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            answer = server._next()
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.flush()
            if answer.kind == "answer":
                self.wfile.write(answer.body)
            elif answer.kind == "trickle":
                self.trickle(answer)
            else:
                self.wfile.write(answer.body[: len(answer.body) // 2])
                self.wfile.flush()
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True

        def trickle(self, answer: Answer) -> None:
            try:
                for byte in answer.body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(answer.interval)
            except OSError:
                self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    return Hostile
