"""Organisation-wide search on PostgreSQL (SPEC.md §13): sync stores in, search them all."""
