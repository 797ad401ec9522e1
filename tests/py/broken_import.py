"""A module that fails on import, as a user's module with a typo would."""

raise ImportError("broken on purpose")
