"""A pool's ``max`` across processes: the creates in flight, kept where the deployment keeps
its shared state.

One provider counts a pool's machines from its listing, with its own creates in flight laid
over it; another process's creates show only once its listing is renewed, so processes
creating at once could pass ``max``. The fence closes that gap without a service of ours and
without a leader: every process records each create of a pool with a ``max`` (its name,
cloud, place and since when) in one object per owner and pool, in a store they share, in the
same step that counts (one read, one conditional write), and a create that would pass the
max is refused before any cloud is asked.

- ``held``: the object (``Held``, its ``Entry`` per create in flight), read and written as JSON.
- ``store``: what a store does (``Store.transact``: read, decide, write only if nobody wrote
  between, as one step) and its errors.
- ``files``: ``file:///path``, an OS file lock, for processes on one host.
- ``s3``: ``s3://bucket/prefix?region=...&endpoint=...``, S3's conditional writes
  (``If-None-Match``, ``If-Match``), or any store that honours them (probed once).
- ``url``: which store a fence URL names, and the refusal of any other.
- ``fence``: ``Fence``, the count and the entries: what ``Provider.create`` asks.
"""
