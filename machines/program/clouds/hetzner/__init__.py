"""Hetzner Cloud in the program: its settings and its resources."""
