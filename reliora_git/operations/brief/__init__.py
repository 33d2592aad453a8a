"""Brief: which lessons a task gets, the full brief and the quiet push."""
