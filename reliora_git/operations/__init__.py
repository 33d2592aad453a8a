"""Operations: what the commands do to one store.

Search, record, check, the lifecycle, the hook, review and freshness from history.
"""
