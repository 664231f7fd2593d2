"""The TUI's widgets, one per module; each posts messages up to the app, never calls it."""
