"""The package's exceptions: each message says what went wrong and what to do about it.

Messages never carry a token or user data: they are built from names, ids and codes only.
"""

from __future__ import annotations


class MachinesError(Exception):
    """Base of every error this package raises on purpose."""


class SettingsError(MachinesError, ValueError):
    """The process's settings are missing or malformed: the message names the variable."""


class InvalidNameError(MachinesError, ValueError):
    """A name or label value breaks its rule: the message quotes the rule."""


class UnknownProviderError(SettingsError):
    """``Provider.of`` was given a kind it does not know: the message lists the known ones."""


class UnknownMachineTypeError(MachinesError, LookupError):
    """The cloud's catalogue has no machine type of that name."""


class ForeignMachineError(MachinesError):
    """A machine that is not this owner's pool machine: it is never touched."""


class CloudError(MachinesError):
    """The cloud refused a request or could not be reached within the call's time.

    ``code`` is the cloud's error code (``unauthorized``, ``RequestLimitExceeded``, ...) or
    ``timeout``/``connection`` when no answer came.
    """

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code
