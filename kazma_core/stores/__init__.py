"""Stores: an interface per kind of data, and its SQL written once for both engines (SQLite files or PostgreSQL)."""
