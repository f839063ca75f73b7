"""The API's resources, one package each, as moto lays out its services.

`<name>/state.py` holds the resource's models and the operations on them (reached through
`emulator.project.Project`, built on `collection.py`); `<name>/handlers.py` holds its JSON
shape and its `Kind` (`kind.py`: the routes every resource answers alike, and the one
dispatcher of actions by name), whose routes are its `ROUTES`; `catalogue/` has `data.py`
instead of state. `registry.py` lists them all.
"""
