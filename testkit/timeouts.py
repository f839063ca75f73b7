"""Timeouts for the tests of faults, sized for a loaded 2-core machine.

A loopback server under load can take well over half a second to answer, so a request
timeout that short fails tests that are not about timing. ``REQUEST`` is one such a machine
meets; a delay fault that must outlast it holds its answer ``PAST_REQUEST``, and the
emulator and the fault proxy end the hold when the client gives up
(``emulator.faults.hold``), so each delay costs a test ``REQUEST``, not ``PAST_REQUEST``.
"""

REQUEST = 3.0
"""Seconds per request (``ORCA_REQUEST_TIMEOUT``) in tests of faults."""

PAST_REQUEST = 120.0
"""Seconds a delay fault holds an answer that must come after the client left."""

CALL = 30.0
"""Seconds per call (``ORCA_CALL_TIMEOUT``) in tests of faults that are not about the
call's own deadline: random faults must not add up to it."""
