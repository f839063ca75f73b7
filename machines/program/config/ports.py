"""Port rules the clouds' firewall and security group rules share: ``22``, ``8000-9000``."""

from __future__ import annotations


def check_port(port: str, *, allow_any: bool) -> str:
    """``port`` when it is a port or a low-high range within 1-65535 (or ``any``, allowed)."""
    if allow_any and port == "any":
        return port
    low, _, high = port.partition("-")
    if not (low.isdigit() and (high.isdigit() or not high)):
        ranges = "'22', '8000-9000' or 'any'" if allow_any else "'22' or '8000-9000'"
        raise ValueError(f"port {port!r} is not a port or a range: write {ranges}")
    first, last = int(low), int(high or low)
    if not 1 <= first <= last <= 65535:
        raise ValueError(f"port {port!r} is not within 1-65535 with the low port first")
    return port


def check_rule_port(protocol: str, port: str, *, allow_any: bool, example: str) -> None:
    """A firewall or security group rule's port: needed by tcp and udp, refused by others."""
    if protocol in ("tcp", "udp"):
        if not port:
            raise ValueError(f"{protocol} rules need a port: {example}")
        check_port(port, allow_any=allow_any)
    elif port:
        raise ValueError(f"{protocol} rules have no port: remove it")


def port_as_text(value: object) -> object:
    """A port a stack file gives as a number (``22``), as the text the rules read."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value
