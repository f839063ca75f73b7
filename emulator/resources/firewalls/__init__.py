"""Firewalls: state (rules, attachments) and handlers (/firewalls routes)."""
