"""The terminal UI: a Textual app that talks to a Kazma server over its HTTP API only."""
