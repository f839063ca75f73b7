"""Primary IPs: state (server addresses) and handlers (/primary_ips routes, read-only)."""
