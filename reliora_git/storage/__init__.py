"""Storage: the store on disk or in git, parsed once and kept in the store index."""
