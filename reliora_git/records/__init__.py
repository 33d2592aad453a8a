"""Records: what one file holds, read and judged by itself (pure)."""
