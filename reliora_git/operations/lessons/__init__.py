"""Lessons: search, show, list, record, feedback, the lifecycle, about, stale, commits."""
