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


class InvalidMachineIdError(MachinesError, ValueError):
    """A machine id that is not of the cloud's form: the message shows the form."""


class UnknownMachineTypeError(MachinesError, LookupError):
    """The cloud's catalogue has no machine type of that name."""


class ForeignMachineError(MachinesError):
    """A machine that is not this owner's pool machine: it is never touched."""


class StackMachineError(ForeignMachineError):
    """A machine the stack keeps (``orca-managed-by=pulumi``): only a change of the pool's
    ``size`` in the stack removes it, never the runtime's ``delete``."""


class FenceError(MachinesError):
    """The fence's store (``ORCA_FENCE_URL``, or the stack's backend) could not be read or
    written, or cannot fence: a create of a pool with a ``max`` answers ``failed`` saying
    so, never an unfenced create."""


class CloudError(MachinesError):
    """The cloud refused a request or could not be reached within the call's time.

    ``code`` is the cloud's error code (``unauthorized``, ``RequestLimitExceeded``, ...), or
    one of ``UNANSWERED`` when no usable answer came.
    """

    def __init__(self, message: str, code: str = "", *, transient: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self._transient = transient

    @property
    def answer_lost(self) -> bool:
        """True when the request may have been carried out although no answer came."""
        return self.code in ANSWER_LOST

    @property
    def transient(self) -> bool:
        """True when the cloud could not answer now: no answer came, or each answer was
        worth another try (5xx, throttled, busy) until the call's time ran out."""
        return self._transient or self.code in ANSWER_LOST

    def exhausted(self) -> CloudError:
        """This error as the end of a call whose retries ran out of time: ``transient``."""
        return CloudError(str(self), self.code, transient=True)


class LostCreateError(CloudError):
    """A create request that may have made the machine although its answer was lost: the
    same name created again returns that machine (``Created.may_exist``)."""


class AccountFullError(CloudError):
    """The cloud account is at one of its limits (Hetzner's project limits, EC2's quotas):
    no create of ``market`` is made anywhere on that cloud until a machine goes or the
    limit is raised. ``code`` is the cloud's."""

    def __init__(self, message: str, code: str, market: str) -> None:
        super().__init__(message, code)
        self.market = market


TIMEOUT = "timeout"
"""``CloudError.code`` of a request whose answer did not come in time."""
CONNECTION = "connection"
"""``CloudError.code`` of a request whose connection failed or broke."""
CREDENTIALS = "credentials"
"""``CloudError.code`` when no credentials could be found to sign a request."""
NOT_THE_API = "not_the_api"
"""``CloudError.code`` of an answer that is not the cloud API's (an HTML page, an empty body)."""

ANSWER_LOST = frozenset({TIMEOUT, CONNECTION})
"""Codes of a request that may have been carried out although its answer was lost: a create
must look before it tries again. The same on every cloud."""

UNANSWERED = frozenset({TIMEOUT, CONNECTION, CREDENTIALS, NOT_THE_API})
"""Codes of our own, for calls the cloud never answered as its API does."""
