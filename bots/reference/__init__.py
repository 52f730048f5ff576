"""Reference bots, one module per game family; every module here is loaded by the registry."""
