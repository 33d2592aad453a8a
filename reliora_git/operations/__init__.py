"""Operations: what the commands do to one store, in five wings.

``agents``, ``lessons`` and ``review`` sit over ``brief`` and ``guards``, which sit over
the two shared modules ``freshness`` (what changed since a lesson was written) and
``paths`` (a path as the store names it). Contracts in pyproject.toml hold the order.
"""
