"""The terminal spectator: a Textual app that speaks the arena's /watch protocol.

A separate process and a plain client of the server: it imports only ``arena.protocol``
of the arena (never trio, the games or the bots), so it draws any game from the generic
render blocks of a view. Start it with ``arena watch`` or ``arena demo --watch``.
"""
