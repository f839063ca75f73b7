"""SSH keys: OpenSSH public keys stored in the project, unique by name and by fingerprint."""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass

from emulator.errors import invalid_field, invalid_input, uniqueness
from emulator.resources.collection import NamedCollection

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


class SSHKeys(NamedCollection[SSHKey]):
    """The project's SSH keys."""

    kind = "ssh_key"
    first_id = FIRST_ID
    name_taken = "SSH key with the same name already exists"

    def referenced(self, ref: int | str) -> SSHKey:
        """The key a create request names by id or name; invalid_input if there is none."""
        for key in self.by_id.values():
            if ref in (key.id, key.name):
                return key
        raise invalid_input(f"ssh key {ref} not found")

    def create(self, name: str, public_key: str, labels: dict[str, str]) -> SSHKey:
        """Store a public key; names and fingerprints are unique."""
        fingerprint = ssh_fingerprint(public_key)
        self.check_name(name)
        if any(key.fingerprint == fingerprint for key in self.by_id.values()):
            raise uniqueness("public_key", "SSH key with the same fingerprint already exists")
        key = SSHKey(
            next(self._ids), name, fingerprint, public_key.strip(), labels, self.project.now
        )
        return self._added(key)
