"""PostgreSQL sessions of any system: connecting, error mapping, the session watch, the
reconnecting listener and the console's opt-in indexes."""
