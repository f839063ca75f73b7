"""One way to keep secrets out of messages and logs, for every cloud and every face.

Two kinds of text need it: messages built from what an engine or a cloud said (``mask``:
the values of secret variables, wherever they appear) and the debug logs of client libraries
(``redact``: anything in the shape of a token, signature or user data).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterable, Mapping

from machines.runtime.clouds import credentials
from machines.runtime.settings import PULUMI_ACCESS_TOKEN, PULUMI_CONFIG_PASSPHRASE

MASK = "[secret]"
"""What a secret is shown as: the same mask the Pulumi engine prints."""

ENGINE_SECRETS = (PULUMI_CONFIG_PASSPHRASE, PULUMI_ACCESS_TOKEN)
"""The engine's variables whose values are masked should a message ever quote one; each
cloud's are its facts' ``credentials``."""


def secret_variables() -> tuple[str, ...]:
    """Every variable whose value is masked: each cloud's credentials and the engine's."""
    return (*credentials(), *ENGINE_SECRETS)


_SHORTEST = 4
"""Values shorter than this are not masked: masking ``a`` would garble every message."""

_SECRET_FIELD = re.compile(
    r"(?P<key>\b(?:UserData|user_data|X-Amz-Security-Token|Signature|SecretAccessKey"
    r"|SessionToken|aws_secret_access_key|aws_session_token|Password|Authorization)"
    r"['\"]?\s*[:=]\s*)"
    r"(?P<value>b?'[^']*'|b?\"[^\"]*\"|Bearer\s+\S+|[^\s,&;}'\"<]+)",
    re.IGNORECASE,
)
_USER_DATA_XML = re.compile(r"(<userData>).*?(</userData>)", re.IGNORECASE | re.DOTALL)


def digest(*secrets: str) -> str:
    """A short fingerprint of ``secrets``: tells two credentials apart (whose account a
    provider reaches) without keeping or showing either."""
    return hashlib.sha256("\0".join(secrets).encode()).hexdigest()[:16]


def mask(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with the value of every secret variable of ``environ`` shown as ``MASK``."""
    env = os.environ if environ is None else environ
    for name in secret_variables():
        value = env.get(name, "")
        if len(value) >= _SHORTEST:
            text = text.replace(value, MASK)
    return text


def redact(text: str) -> str:
    """``text`` with user data, tokens, signatures and secret keys in it blanked out."""
    text = _SECRET_FIELD.sub(lambda m: m.group("key") + MASK, text)
    return _USER_DATA_XML.sub(rf"\1{MASK}\2", text)


class RedactSecrets(logging.Filter):
    """Rewrites a record's message without secrets; drops no record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        clean = mask(redact(message))
        if clean != message:
            record.msg, record.args = clean, ()
        return True


def redact_logs(names: Iterable[str]) -> None:
    """Put one ``RedactSecrets`` on each named logger; calling again adds none.

    A filter on a logger sees only that logger's own records, so each module's logger is
    named; it runs only for records a logger makes, so it costs nothing while they are off.
    """
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
