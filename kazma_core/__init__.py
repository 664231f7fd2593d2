"""Kazma's core: settings, stores, the agent runtime and time-travel capture."""
