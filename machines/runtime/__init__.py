"""The runtime: what orca's autoscaler imports, the same on every cloud.

Values, errors and label rules, the settings, the small ``Provider`` interface and the
factory behind ``Provider.of``, one package per cloud under ``clouds/``, prices, billing and
paid time, the stock memory, the budget and telemetry. It never imports the program,
automation, the CLI or Pulumi (the ``runtime`` import contract); ``machines`` re-exports its
public API.

This package is where the runtime is put together: it installs the factory
(``machines.runtime.factory.of``) as what ``Provider.of`` calls. The factory builds the
providers, so it stands above ``provider``, which may not import it (no import cycle, even a
lazy one: ``tests/unit/test_import_contract.py``); every import of a runtime module loads
this package first, so ``Provider.of`` works however ``Provider`` was imported.
"""

from machines.runtime import factory, provider

provider.install(factory.of)
