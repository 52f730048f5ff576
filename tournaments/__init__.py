"""Tournaments: schedules of matches over participants, run through the arena's one match loop.

``formats`` turns participants into scheduled matches (pure functions), ``config`` reads
a tournament's TOML file, ``runner`` plays the schedule in-process into a store and
``remote`` through a live server (its ``create_match``), both resumably: every scheduled
match has a stable key, and a restarted run plays only the keys that have no finished
match yet.
"""
