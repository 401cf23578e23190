"""SQLite files of any system: read-only opening and error mapping."""
