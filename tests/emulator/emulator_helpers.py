"""Helpers shared by the emulator tests (a module name no other test folder uses)."""

from __future__ import annotations

from typing import Any

import requests

from tests.conftest import TOKEN


class RawApi:
    """The API over plain `requests`, for what the official client hides (status, headers)."""

    def __init__(self, url: str, token: str | None = TOKEN) -> None:
        self.url = url
        self.session = requests.Session()
        if token is not None:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """Send `method` to `url + path` (path starts with /)."""
        return self.session.request(method, self.url + path, timeout=10, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)
