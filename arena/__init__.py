"""The engine and the live server: matches, seats, the wire protocol, the store."""
