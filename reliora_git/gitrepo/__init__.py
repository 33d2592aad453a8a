"""Git: running git, and installing the hook."""
