"""hcloud-python set up for the provider: one client per thread, no retries of its own."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from hcloud import Client
from requests.adapters import HTTPAdapter

from machines.runtime import deadline, telemetry
from machines.runtime.clouds.hetzner.settings import HetznerSettings

_NUMBER = re.compile(r"/[0-9]+(?=/|$)")


def operation(method: str, url: str, base_path: str = "") -> str:
    """A request's operation as the metrics name it: its method and path template below
    the API's base, ids as ``{id}`` (``GET /servers/{id}``), never a query."""
    path = urlsplit(url).path
    if base_path and path.startswith(base_path):
        path = path[len(base_path) :] or "/"
    return f"{method} {_NUMBER.sub('/{id}', path)}"


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter held to the call's deadline: the request's timeout is cut to the
    time left, and the body is read within it (``machines.runtime.deadline.read_body``). Each
    request is timed and traced (``machines.runtime.telemetry.http_request``)."""

    def __init__(self, request_timeout: float, base_path: str = "") -> None:
        super().__init__()
        self._request_timeout = request_timeout
        self._base_path = base_path.rstrip("/")

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        method, url = request.method or "GET", request.url or ""
        full = operation(method, url)
        with telemetry.http_request(
            "hetzner",
            method,
            url,
            operation(method, url, self._base_path),
            span_name=full,
            url_template=full.partition(" ")[2],
        ) as traced:
            response = self._send(request, stream, **kwargs)
            traced.answered(response.status_code)
            return response

    def _send(
        self, request: requests.PreparedRequest, stream: bool, **kwargs: Any
    ) -> requests.Response:
        seconds = deadline.timeout(self._request_timeout)
        kwargs["timeout"] = (seconds, seconds)
        response = super().send(request, stream=True, **kwargs)
        if not stream:
            try:
                response._content = deadline.read_body(
                    response.raw, self._request_timeout, decode=True
                )
            except deadline.BodyTimeout as error:
                response.close()
                raise requests.ReadTimeout(str(error), request=request) from None
            except Exception as error:
                response.close()
                raise requests.ConnectionError(
                    f"the answer broke off: {type(error).__name__}", request=request
                ) from None
            response._content_consumed = True  # type: ignore[attr-defined]
        return response


class Clients:
    """This thread's hcloud client, and what its last answer said besides its body.

    requests sessions are not shared between threads, so each thread gets its own client.
    hcloud-python's retries are off: the provider retries, knowing which calls are safe.
    The ``RateLimit-Reset`` header and the HTTP status of the last answer are kept: hcloud
    drops the status of an answer that carries an API error, and a 503 is worth another try
    whatever its code says.
    """

    def __init__(
        self,
        settings: HetznerSettings,
        observe: Callable[[Mapping[str, str]], None] | None = None,
    ) -> None:
        """``observe`` sees every answer's headers (the budget meter reads ``RateLimit-*``)."""
        self._settings = settings
        self._observe = observe
        self._local = threading.local()

    def get(self) -> Client:
        """This thread's client, made on first use."""
        client: Client | None = getattr(self._local, "client", None)
        if client is None:
            timeout = self._settings.timeouts.request
            client = Client(
                token=self._settings.token.get_secret_value(),
                api_endpoint=self._settings.endpoint,
                application_name="orca-machines",
                timeout=(timeout, timeout),
            )
            # hcloud-python offers no switch for these; tests pin that the attributes exist.
            base = client._client
            base._retry_max_retries = 0
            base._session.hooks["response"].append(self._remember_answer)
            adapter = DeadlineAdapter(timeout, urlsplit(self._settings.endpoint).path)
            base._session.mount("http://", adapter)
            base._session.mount("https://", adapter)
            self._local.client = client
        return client

    def rate_limit_reset(self) -> str | None:
        """The ``RateLimit-Reset`` header of this thread's last answer, if any."""
        reset: str | None = getattr(self._local, "rate_limit_reset", None)
        return reset

    def last_status(self) -> int:
        """The HTTP status of this thread's last answer (0 before any)."""
        status: int = getattr(self._local, "status", 0)
        return status

    def _remember_answer(
        self, response: requests.Response, *args: object, **kwargs: object
    ) -> None:
        self._local.rate_limit_reset = response.headers.get("RateLimit-Reset")
        self._local.status = response.status_code
        if self._observe is not None:
            self._observe(response.headers)
