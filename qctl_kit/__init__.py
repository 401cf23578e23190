"""qctl_kit: the database toolkit under every system qctl drives (azync's store, DBOS,
hopper, dispatch, River): errors, DSNs, sessions with their timeouts, the session watch,
the reconnecting listener, SQL files, batches, tune and the decoding of what a row holds.
It knows no system: each system's package (and ``qctl_store``, azync's store) is a client
of it."""
