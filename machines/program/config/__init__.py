"""A stack's configuration, validated: plain pydantic, no Pulumi here.

``stack_config`` is what Pulumi hands the program (or a stack file, decoded); ``models``
the shape every cloud's deployment shares, and ``ports`` the firewall port rules two clouds
share; ``loader.load`` makes a ``StackConfig`` into the deployment its ``provider`` names
(each cloud's in ``machines.program.<cloud>.config``, found through ``clouds``), and
``problems`` turns what pydantic refuses into one line per key, with hints.
"""
