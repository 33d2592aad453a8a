"""``reliora eval``: what agents are told, tested like code (cases, and every lesson's reach)."""
