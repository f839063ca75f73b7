"""Placement groups: state (spread groups and their servers) and handlers (/placement_groups)."""
