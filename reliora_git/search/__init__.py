"""Search: tokens, the explained ranking, the inverted index and duplicate evidence (pure)."""
