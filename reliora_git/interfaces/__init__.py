"""Interfaces: the command line and the MCP server, and what they print."""
