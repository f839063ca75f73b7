"""Servers: state (models, lifecycle) and handlers (/servers routes)."""
