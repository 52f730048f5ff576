"""Adapters that present arena games through other frameworks' interfaces (optional extras)."""
