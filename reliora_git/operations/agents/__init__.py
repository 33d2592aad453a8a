"""Agents: installs into each client, the hook every client runs, the session, the ask."""
