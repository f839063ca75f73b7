"""Actions: state (tasks and the lazy clock) and handlers (/actions routes, action JSON)."""
