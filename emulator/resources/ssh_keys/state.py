"""SSH keys: OpenSSH public keys stored in the project, unique by name and by fingerprint."""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from emulator.errors import invalid_field, invalid_input, not_found, uniqueness

if TYPE_CHECKING:
    from emulator.project import Project

FIRST_ID = 20_001
SSH_KEY_TYPES = frozenset(
    {
        "ssh-rsa",
        "ssh-dss",
        "ssh-ed25519",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com",
    }
)


@dataclass
class SSHKey:
    """An SSH public key stored in the project."""

    id: int
    name: str
    fingerprint: str
    public_key: str
    labels: dict[str, str]
    created: float


def ssh_fingerprint(public_key: str) -> str:
    """The MD5 fingerprint (aa:bb:...) of an OpenSSH public key; invalid_input if malformed."""
    parts = public_key.split()
    if len(parts) < 2 or parts[0] not in SSH_KEY_TYPES:
        raise invalid_field("public_key", "invalid public key")
    try:
        blob = base64.b64decode(parts[1], validate=True)
        (length,) = struct.unpack(">I", blob[:4])
    except (binascii.Error, struct.error):
        raise invalid_field("public_key", "invalid public key") from None
    if blob[4 : 4 + length].decode("ascii", "replace") != parts[0]:
        raise invalid_field("public_key", "invalid public key")
    digest = hashlib.md5(blob, usedforsecurity=False).hexdigest()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


class SSHKeys:
    """The project's SSH keys."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.by_id: dict[int, SSHKey] = {}
        self._ids = itertools.count(FIRST_ID)

    def get(self, key_id: int) -> SSHKey:
        """An SSH key by id."""
        if key_id not in self.by_id:
            raise not_found("ssh_key", key_id)
        return self.by_id[key_id]

    def referenced(self, ref: int | str) -> SSHKey:
        """The key a create request names by id or name; invalid_input if there is none."""
        for key in self.by_id.values():
            if ref in (key.id, key.name):
                return key
        raise invalid_input(f"ssh key {ref} not found")

    def create(self, name: str, public_key: str, labels: dict[str, str]) -> SSHKey:
        """Store a public key; names and fingerprints are unique."""
        fingerprint = ssh_fingerprint(public_key)
        if any(key.name == name for key in self.by_id.values()):
            raise uniqueness("name", "SSH key with the same name already exists")
        if any(key.fingerprint == fingerprint for key in self.by_id.values()):
            raise uniqueness("public_key", "SSH key with the same fingerprint already exists")
        key = SSHKey(
            next(self._ids), name, fingerprint, public_key.strip(), labels, self.project.now
        )
        self.by_id[key.id] = key
        return key

    def update(self, key_id: int, name: str | None, labels: dict[str, str] | None) -> SSHKey:
        """Rename an SSH key and/or replace its labels."""
        key = self.get(key_id)
        if name is not None and name != key.name:
            if any(other.name == name for other in self.by_id.values()):
                raise uniqueness("name", "SSH key with the same name already exists")
            key.name = name
        if labels is not None:
            key.labels = labels
        return key

    def delete(self, key_id: int) -> None:
        """Delete an SSH key (servers keep running)."""
        del self.by_id[self.get(key_id).id]

    def reset(self) -> None:
        """Drop every key (ids keep counting up)."""
        self.by_id.clear()
