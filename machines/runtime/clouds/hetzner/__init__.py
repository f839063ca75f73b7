"""Hetzner Cloud: servers of one project, labelled per owner, on hcloud-python."""
