"""Networks: state (networks, subnets, attached servers) and handlers (/networks routes)."""
