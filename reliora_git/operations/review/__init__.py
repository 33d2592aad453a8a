"""Review: check a store, check what is staged, the commit hook's pointer, a branch."""
