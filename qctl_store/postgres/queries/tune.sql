-- The console's opt-in indexes (`qctl db tune`), for every system's own table alike.

-- name: present
-- Which of the console's named indexes exist, valid, on one table.
-- The table is resolved through the session's search_path (the system's schema); an
-- index a CONCURRENTLY build left invalid does not count.
SELECT c.relname AS name
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = to_regclass(%(table)s) AND i.indisvalid AND c.relname = ANY(%(names)s);
