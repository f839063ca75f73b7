"""Who may call the API: a bearer token of the form the real API issues, among those given.

Hetzner Cloud issues API tokens of exactly 64 letters and digits (a 32-character prefix that
names the token and a 32-character secret); the official clients and the Terraform/Pulumi
provider refuse any other before sending it. The emulator takes only such tokens at start
(``--token``), so a test or a demo can never lean on a token the real API would refuse, and
answers any other with the API's ``unauthorized``.
"""

from __future__ import annotations

import hmac
import re

TOKEN_LENGTH = 64
_TOKEN = re.compile(rf"[A-Za-z0-9]{{{TOKEN_LENGTH}}}")


class TokenError(ValueError):
    """A token the real API would never issue; the message says what is wrong, not the token."""


def check_token(token: str) -> str:
    """``token`` when it has the real API's form, else ``TokenError`` (never showing it)."""
    if len(token) != TOKEN_LENGTH:
        raise TokenError(
            f"a Hetzner Cloud API token has exactly {TOKEN_LENGTH} characters; this one has "
            f"{len(token)}"
        )
    if not _TOKEN.fullmatch(token):
        raise TokenError("a Hetzner Cloud API token is made of letters and digits only")
    return token


class Tokens:
    """The tokens that open the emulator's project, all of the real API's form."""

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self._valid = tuple(check_token(token).encode() for token in tokens)

    def authorized(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header carries one of the tokens, as ``Bearer``."""
        scheme, _, token = (authorization or "").partition(" ")
        given = token.strip()
        if scheme.lower() != "bearer" or not _TOKEN.fullmatch(given):
            return False
        # compare with every token, so timing does not say which one nearly matched
        return any([hmac.compare_digest(given.encode(), valid) for valid in self._valid])
