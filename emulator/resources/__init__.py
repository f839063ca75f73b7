"""The API's resources, one package each, as moto lays out its services.

`<name>/state.py` holds the resource's models and the operations on them (reached through
`emulator.project.Project`); `<name>/handlers.py` holds its HTTP routes (`ROUTES`) and its
JSON shape; `catalogue/` has `data.py` instead of state. `registry.py` lists them all.
"""
