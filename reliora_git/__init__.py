"""Reliora for git: engineering experiences kept next to the code, found by lexical search."""

__version__ = "0.1.0"
