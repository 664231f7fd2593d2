"""Stores: an interface per kind of data and a SQLite backend for each (PostgreSQL can follow)."""
