"""hcloud-python set up for the provider: one client per thread, no retries of its own."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import requests
from hcloud import Client

from machines.clouds.hetzner.settings import HetznerSettings


class Clients:
    """This thread's hcloud client, and the ``RateLimit-Reset`` its last answer carried.

    requests sessions are not shared between threads, so each thread gets its own client.
    hcloud-python's retries are off: the provider retries, knowing which calls are safe.
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
            base._session.hooks["response"].append(self._remember_rate_limit)
            self._local.client = client
        return client

    def rate_limit_reset(self) -> str | None:
        """The ``RateLimit-Reset`` header of this thread's last answer, if any."""
        reset: str | None = getattr(self._local, "rate_limit_reset", None)
        return reset

    def _remember_rate_limit(
        self, response: requests.Response, *args: object, **kwargs: object
    ) -> None:
        self._local.rate_limit_reset = response.headers.get("RateLimit-Reset")
        if self._observe is not None:
            self._observe(response.headers)
