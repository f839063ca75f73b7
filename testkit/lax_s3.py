"""An object store that speaks S3's GetObject and PutObject but ignores their preconditions
(``If-None-Match``, ``If-Match``), as some S3-compatible stores did before S3 had them: the
fence must refuse it, since it would let two processes both write.

``serving()`` runs it on loopback and yields its URL (path-style: ``/<bucket>/<key>``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NO_SUCH_KEY = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code>'
    b"<Message>The specified key does not exist.</Message></Error>"
)


@contextmanager
def serving() -> Iterator[str]:
    """A lax store on a free loopback port; its URL."""
    objects: dict[str, bytes] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with lock:
                body = objects.get(self.path.split("?")[0])
            if body is None:
                self._answer(404, NO_SUCH_KEY, "application/xml")
                return
            self._answer(200, body, "application/json", _etag(body))

        def do_PUT(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                objects[self.path.split("?")[0]] = body  # whatever If-* says
            self._answer(200, b"", "application/xml", _etag(body))

        def _answer(self, status: int, body: bytes, kind: str, etag: str = "") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            if etag:
                self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _etag(body: bytes) -> str:
    return f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"'
