"""SSH keys: state (keys, fingerprints) and handlers (/ssh_keys routes)."""
