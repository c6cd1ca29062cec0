"""One service per command family; each route depends on the one it calls, and each service on its own few
parts (built together in `game/bureau.py`)."""
