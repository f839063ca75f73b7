"""The runtime: what orca's autoscaler imports, the same on every cloud.

Values, errors and label rules, the settings, the small ``Provider`` interface and
``Provider.of``, one package per cloud under ``clouds/``, prices, billing and paid time,
the stock memory, the budget and telemetry. It never imports the program, automation, the
CLI or Pulumi (the ``runtime`` import contract); ``machines`` re-exports its public API.
"""
