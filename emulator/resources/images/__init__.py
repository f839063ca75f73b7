"""Images: state (snapshots and backups) and handlers (/images routes, system images included)."""
