-- Declared DAG workflows (DAGStore) on PostgreSQL: the azync_dags header, the
-- azync_dag_deps edges, the azync_dag_signals inbox and the source='dag' jobs.
-- Semantics follow azync's driver/azyncpgx/dag_store.go.

-- name: lock_dag
-- A DAG's header row locked, with its state.
-- The header row lock every verb that changes a DAG's lifecycle takes first: it
-- serialises policy passes, manual verbs and signals on one DAG.
SELECT state FROM azync_dags WHERE id = %(id)s FOR UPDATE

-- name: insert_dag
-- A DAG header inserted unless a live DAG of the same name holds its idempotency key.
-- The conflict target is only the live-key index, so a duplicate id still fails
-- loudly on the primary key instead of being silently dropped.
INSERT INTO azync_dags (id, name, state, on_failure, idempotency_key, meta, created_at, updated_at)
VALUES (%(id)s, %(name)s, 'running', %(on_failure)s, %(idempotency_key)s, %(meta)s::jsonb,
        now(), now())
ON CONFLICT (name, idempotency_key)
    WHERE idempotency_key IS NOT NULL
      AND state IN ('running', 'suspended', 'compensating', 'paused')
DO NOTHING
RETURNING id

-- name: live_dag_by_key
-- The live DAG of a name holding an idempotency key.
SELECT id FROM azync_dags
WHERE name = %(name)s AND idempotency_key = %(key)s
  AND state IN ('running', 'suspended', 'compensating', 'paused')

-- name: insert_task
-- One task job of a DAG inserted.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, payload, meta,
     enqueued_at, dag_id, task_key, compensation_kind, compensation_payload, signal_name,
     ignore_dead_deps, snooze_budget)
VALUES (%(id)s, 'dag', %(kind)s, %(state)s, now() + %(offset)s * interval '1 microsecond',
        %(max_attempts)s, %(explicit)s, %(payload)s::jsonb, %(meta)s::jsonb, now(),
        %(dag_id)s, %(task_key)s, %(compensation_kind)s, %(compensation_payload)s::jsonb,
        %(signal_name)s, %(ignore_dead_deps)s, %(snooze_budget)s)

-- name: insert_dep
-- One dependency edge of a DAG task recorded.
INSERT INTO azync_dag_deps (dag_id, task_key, depends_on_key) VALUES (%s, %s, %s)

-- name: insert_signal
-- A signal added to a DAG's inbox unless its message id was seen.
INSERT INTO azync_dag_signals (id, dag_id, name, message_id, payload)
VALUES (%(id)s, %(dag_id)s, %(name)s, %(message_id)s, %(payload)s::jsonb)
ON CONFLICT (dag_id, name, message_id) WHERE message_id IS NOT NULL DO NOTHING
RETURNING id

-- name: deliver_signal_now
-- A signal handed to the DAG's waiting $signal task or scheduled $sleep of its name.
-- A waiting $signal task completes with the payload as its result; a scheduled
-- $sleep is woken (due now). Both match the task's signal_name, not its key.
UPDATE azync_jobs SET
    state = CASE kind WHEN '$signal' THEN 'succeeded' ELSE state END,
    result = CASE kind WHEN '$signal' THEN %(payload)s::jsonb ELSE result END,
    completed_at = CASE kind WHEN '$signal' THEN now() ELSE completed_at END,
    run_at = CASE kind WHEN '$sleep' THEN now() ELSE run_at END,
    updated_at = now()
WHERE source = 'dag' AND dag_id = %(dag_id)s AND signal_name = %(name)s
  AND ((kind = '$signal' AND state = 'waiting') OR (kind = '$sleep' AND state = 'scheduled'))

-- name: consume_signal
-- An inbox signal marked consumed.
UPDATE azync_dag_signals SET consumed = true WHERE id = %s

-- name: deliver_buffered_signals
-- The oldest buffered signal of each deliverable task handed over and consumed.
-- Per deliverable task of a running or compensating DAG, the oldest unconsumed
-- inbox signal of its name is handed over and marked consumed. The update repeats
-- the task condition: it is re-checked under the row lock, so a task a concurrent
-- Signal completed first keeps that result and the picked signal stays buffered.
WITH pick AS (
    SELECT DISTINCT ON (t.id) t.id AS task_id, s.id AS signal_id, s.payload
    FROM azync_jobs t
    JOIN azync_dags d ON d.id = t.dag_id AND d.state IN ('running', 'compensating')
    JOIN azync_dag_signals s
      ON s.dag_id = t.dag_id AND s.name = t.signal_name AND NOT s.consumed
    WHERE t.source = 'dag'
      AND ((t.kind = '$signal' AND t.state = 'waiting')
        OR (t.kind = '$sleep' AND t.state = 'scheduled'))
    ORDER BY t.id, s.created_at, s.id
),
handed AS (
    UPDATE azync_jobs t SET
        state = CASE t.kind WHEN '$signal' THEN 'succeeded' ELSE t.state END,
        result = CASE t.kind WHEN '$signal' THEN p.payload ELSE t.result END,
        completed_at = CASE t.kind WHEN '$signal' THEN now() ELSE t.completed_at END,
        run_at = CASE t.kind WHEN '$sleep' THEN now() ELSE t.run_at END,
        updated_at = now()
    FROM pick p
    WHERE t.id = p.task_id
      AND ((t.kind = '$signal' AND t.state = 'waiting')
        OR (t.kind = '$sleep' AND t.state = 'scheduled'))
    RETURNING p.signal_id
)
UPDATE azync_dag_signals s SET consumed = true
FROM handed h WHERE s.id = h.signal_id

-- name: promote_unblocked
-- The blocked tasks whose dependencies are all satisfied released.
-- A blocked task of a running or compensating DAG is released once none of its
-- edges lacks a satisfying dependency row (succeeded or skipped; dead or cancelled
-- too for an ignore_dead_deps task). An edge to a missing task never satisfies.
UPDATE azync_jobs t SET
    state = CASE t.kind WHEN '$signal' THEN 'waiting' WHEN '$sleep' THEN 'scheduled'
                        ELSE 'pending' END,
    run_at = CASE t.kind
        WHEN '$signal' THEN t.run_at
        WHEN '$sleep' THEN now() + COALESCE((t.payload->>'sleepSeconds')::double precision, 0)
                                   * interval '1 second'
        ELSE now() END,
    updated_at = now()
FROM azync_dags d
WHERE t.source = 'dag' AND t.state = 'blocked'
  AND d.id = t.dag_id AND d.state IN ('running', 'compensating')
  AND NOT EXISTS (
      SELECT 1 FROM azync_dag_deps e
      WHERE e.dag_id = t.dag_id AND e.task_key = t.task_key
        AND NOT EXISTS (
            SELECT 1 FROM azync_jobs up
            WHERE up.dag_id = e.dag_id AND up.task_key = e.depends_on_key AND up.source = 'dag'
              AND (up.state IN ('succeeded', 'skipped')
                   OR (t.ignore_dead_deps AND up.state IN ('dead', 'cancelled')))))
RETURNING t.kind

-- name: complete_due_sleeps
-- The due $sleep tasks of running DAGs completed.
UPDATE azync_jobs t SET state = 'succeeded', completed_at = now(), updated_at = now()
FROM azync_dags d
WHERE t.source = 'dag' AND t.kind = '$sleep' AND t.state = 'scheduled' AND t.run_at <= now()
  AND d.id = t.dag_id AND d.state = 'running'

-- name: triggering_dead_tasks
-- The dead tasks of running DAGs that trigger their failure policy.
-- Dead tasks of running DAGs that trigger the failure policy: a dead task is
-- tolerated only when it has dependents and every one of them ignores dead deps
-- (an aggregate over no dependents is NULL, so a dead leaf always triggers). The
-- check is one indexed probe per dead task, never a pass over every edge.
SELECT d.id, d.on_failure, t.task_key
FROM azync_dags d
JOIN azync_jobs t ON t.dag_id = d.id AND t.source = 'dag' AND t.state = 'dead'
WHERE d.state = 'running'
  AND NOT COALESCE((SELECT bool_and(COALESCE(down.ignore_dead_deps, false))
                    FROM azync_dag_deps e
                    LEFT JOIN azync_jobs down
                      ON down.dag_id = e.dag_id AND down.task_key = e.task_key
                     AND down.source = 'dag'
                    WHERE e.dag_id = t.dag_id AND e.depends_on_key = t.task_key), false)

-- name: suspend_running_dag
-- A running DAG suspended with a reason.
-- The state guard re-checks under the row lock: a DAG a concurrent verb moved out
-- of running is skipped, never overwritten.
UPDATE azync_dags SET state = 'suspended', failure_reason = %(reason)s, updated_at = now()
WHERE id = %(id)s AND state = 'running'

-- name: cancel_remaining_tasks
-- A DAG's unsettled tasks, active ones aside, cancelled.
-- Active tasks keep their lease and settle on their own.
UPDATE azync_jobs SET state = 'cancelled', completed_at = now(), updated_at = now()
WHERE dag_id = %s AND source = 'dag'
  AND state IN ('pending', 'scheduled', 'blocked', 'waiting', 'paused')

-- name: has_compensations
-- Whether a DAG's compensation chain exists.
SELECT EXISTS (SELECT 1 FROM azync_jobs
               WHERE dag_id = %s AND source = 'dag' AND task_key LIKE 'comp:%%') AS present

-- name: compensation_candidates
-- The succeeded tasks of a DAG that declared a compensation, newest completion first.
-- Succeeded (never skipped) original tasks that declared a compensation, newest
-- completion first: the chain undoes work in reverse order.
SELECT task_key, compensation_kind
FROM azync_jobs
WHERE dag_id = %s AND source = 'dag' AND state = 'succeeded'
  AND compensation_kind IS NOT NULL AND compensation_kind <> ''
  AND task_key NOT LIKE 'comp:%%'
ORDER BY completed_at DESC, created_at DESC, id DESC

-- name: insert_compensation
-- The compensation task comp:<key> of one succeeded task inserted.
-- comp:<key> copies meta and the budget of the original; it has no compensation,
-- signal, tolerance or snooze budget of its own.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, payload, meta,
     enqueued_at, dag_id, task_key)
SELECT %(id)s, 'dag', o.compensation_kind, %(state)s, now(), o.max_attempts,
       o.max_attempts_explicit, o.compensation_payload, o.meta, now(), o.dag_id, %(comp_key)s
FROM azync_jobs o
WHERE o.dag_id = %(dag_id)s AND o.source = 'dag' AND o.task_key = %(task_key)s

-- name: settle_after_compensation_start
-- A DAG whose failure policy compensates moved to compensating, or to failed with nothing to undo.
-- With nothing to compensate the DAG fails at once; otherwise it compensates.
-- A NULL reason keeps the recorded one (the manual verb leaves it unchanged).
UPDATE azync_dags SET
    state = CASE WHEN %(comps)s THEN 'compensating' ELSE 'failed' END,
    failure_reason = COALESCE(%(reason)s, failure_reason),
    completed_at = CASE WHEN %(comps)s THEN completed_at ELSE now() END,
    updated_at = now()
WHERE id = %(id)s

-- name: complete_running_succeeded
-- The running DAGs whose tasks all succeeded or were skipped completed as succeeded.
-- At least one task and all of them succeeded or skipped (bool_and over no rows is
-- NULL). A per-DAG aggregate is never flattened into a join, so the pass probes
-- each running DAG's tasks through azync_jobs_dag_task_idx instead of hashing
-- every unsettled job of the store.
UPDATE azync_dags d SET state = 'succeeded', completed_at = now(), updated_at = now()
WHERE d.state = 'running'
  AND (SELECT bool_and(j.state IN ('succeeded', 'skipped'))
       FROM azync_jobs j WHERE j.dag_id = d.id AND j.source = 'dag')

-- name: complete_running_failed
-- The running DAGs whose tasks all settled, every dead one tolerated, completed as failed.
-- All tasks settled with at least one dead, and every dead task tolerated (it has
-- dependents and all of them ignore dead deps). A non-tolerated death is left for
-- the failure policy, so its compensations are never skipped.
UPDATE azync_dags d SET
    state = 'failed', failure_reason = r.reason, completed_at = now(), updated_at = now()
FROM (
    SELECT j.dag_id, 'dead tasks: ' || string_agg(j.task_key, ', ' ORDER BY j.task_key) AS reason
    FROM azync_jobs j
    JOIN azync_dags h ON h.id = j.dag_id AND h.state = 'running'
    WHERE j.source = 'dag' AND j.state = 'dead'
    GROUP BY j.dag_id
) r
WHERE d.id = r.dag_id AND d.state = 'running'
  AND NOT EXISTS (SELECT 1 FROM azync_jobs j
                  WHERE j.dag_id = d.id AND j.source = 'dag'
                    AND j.state NOT IN ('succeeded', 'skipped', 'dead'))
  AND NOT EXISTS (
      SELECT 1 FROM azync_jobs x
      WHERE x.dag_id = d.id AND x.source = 'dag' AND x.state = 'dead'
        AND NOT COALESCE((SELECT bool_and(COALESCE(down.ignore_dead_deps, false))
                          FROM azync_dag_deps e
                          LEFT JOIN azync_jobs down
                            ON down.dag_id = e.dag_id AND down.task_key = e.task_key
                           AND down.source = 'dag'
                          WHERE e.dag_id = x.dag_id AND e.depends_on_key = x.task_key), false))

-- name: complete_compensating_suspend
-- The compensating DAGs with a dead compensation task suspended.
-- A dead compensation parks the DAG for an operator, unless a cancel asked for it.
UPDATE azync_dags d SET state = 'suspended', updated_at = now()
WHERE d.state = 'compensating' AND NOT d.cancel_requested
  AND EXISTS (SELECT 1 FROM azync_jobs j
              WHERE j.dag_id = d.id AND j.source = 'dag'
                AND j.task_key LIKE 'comp:%%' AND j.state = 'dead')

-- name: complete_compensating_settle
-- The compensating DAGs whose compensation chain settled completed as failed or cancelled.
UPDATE azync_dags d SET
    state = CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'failed' END,
    completed_at = now(), updated_at = now()
WHERE d.state = 'compensating'
  AND EXISTS (SELECT 1 FROM azync_jobs j
              WHERE j.dag_id = d.id AND j.source = 'dag' AND j.task_key LIKE 'comp:%%')
  AND NOT EXISTS (SELECT 1 FROM azync_jobs j
                  WHERE j.dag_id = d.id AND j.source = 'dag' AND j.task_key LIKE 'comp:%%'
                    AND j.state NOT IN ('succeeded', 'cancelled', 'dead'))

-- name: task_results
-- The results of a DAG's succeeded or skipped tasks (all, or the given keys).
SELECT task_key, result, state = 'skipped' AS skipped
FROM azync_jobs
WHERE dag_id = %(dag_id)s AND source = 'dag' AND state IN ('succeeded', 'skipped')
  AND (%(all)s OR task_key = ANY(%(keys)s::text[]))

-- name: ack_task_result
-- A leased DAG task settled as succeeded with its result, fenced on its lease token.
-- state COLLATE "C": found by primary key (jobs.sql's fenced statements say why).
UPDATE azync_jobs SET
    state = 'succeeded', result = %(result)s::jsonb, lease_until = NULL, lease_token = NULL,
    completed_at = now(), updated_at = now()
WHERE id = %(id)s AND state COLLATE "C" = 'active' AND lease_token = %(token)s
RETURNING source, kind

-- name: get_dag
-- One DAG header by id.
SELECT id, name, state, on_failure, idempotency_key, failure_reason, meta,
       created_at, updated_at, completed_at
FROM azync_dags WHERE id = %s

-- name: count_dags
-- How many DAGs match {where} (listing.header_where).
SELECT count(*) AS n FROM azync_dags
WHERE {where}

-- name: list_dags
-- A page of DAG headers matching {where} (filters and keyset position), newest first.
-- A NULL limit is no limit.
SELECT id, name, state, on_failure, idempotency_key, failure_reason, meta,
       created_at, updated_at, completed_at
FROM azync_dags
WHERE {where}
ORDER BY created_at DESC, id DESC
LIMIT %(limit)s OFFSET %(offset)s

-- name: dag_exists
-- Whether a DAG exists.
SELECT EXISTS (SELECT 1 FROM azync_dags WHERE id = %s) AS present

-- name: dag_tasks
-- Every task job of one DAG, compensation tasks included, in creation order.
SELECT {jobs} FROM azync_jobs WHERE dag_id = %s AND source = 'dag'
ORDER BY created_at, id

-- name: dag_deps
-- A DAG's dependency edges, sorted.
SELECT task_key, depends_on_key FROM azync_dag_deps
WHERE dag_id = %s ORDER BY task_key, depends_on_key

-- name: dag_name_state_counts
-- How many DAGs each (name, state) has.
SELECT name, state, count(*) AS n FROM azync_dags GROUP BY name, state

-- name: dag_task_counts
-- How many tasks each of the given DAGs has per state.
SELECT dag_id, state, count(*) AS n FROM azync_jobs
WHERE source = 'dag' AND dag_id = ANY(%s::uuid[])
GROUP BY dag_id, state

-- name: missing_tasks
-- The task keys of this DAG's edges without a job row, '' when it has no task row.
-- Such rows were vacuumed or deleted: a retry must not settle a DAG without them.
SELECT k.key FROM (
    SELECT task_key AS key FROM azync_dag_deps WHERE dag_id = %(id)s
    UNION SELECT depends_on_key FROM azync_dag_deps WHERE dag_id = %(id)s
) k
WHERE NOT EXISTS (SELECT 1 FROM azync_jobs j WHERE j.dag_id = %(id)s AND j.task_key = k.key)
UNION ALL
SELECT '' WHERE NOT EXISTS (SELECT 1 FROM azync_jobs j WHERE j.dag_id = %(id)s)
ORDER BY 1

-- name: reset_dead_tasks
-- A DAG's dead tasks back to pending, only the compensation links once a chain exists.
-- Once a compensation chain exists only its dead links reset: original tasks never
-- rerun after compensation started. The stamped deadline goes too, so a retried
-- wait gets a fresh snooze budget.
UPDATE azync_jobs SET
    state = 'pending', run_at = now(), attempt = 0, reap_count = 0, last_error = NULL,
    failed_at = NULL, deadline_at = NULL, started_at = NULL, updated_at = now()
WHERE dag_id = %(id)s AND source = 'dag' AND state = 'dead'
  AND (NOT %(comps)s OR task_key LIKE 'comp:%%')
RETURNING kind

-- name: unpause_tasks
-- A DAG's paused tasks back to pending, or scheduled while not yet due, deadlines cleared.
-- Time spent paused never burns a snooze budget: the deadline re-stamps later.
UPDATE azync_jobs SET
    state = CASE WHEN run_at <= now() THEN 'pending' ELSE 'scheduled' END,
    deadline_at = NULL, updated_at = now()
WHERE dag_id = %s AND source = 'dag' AND state = 'paused'
RETURNING kind, run_at <= now() AS runnable

-- name: resume_dag
-- A suspended or paused DAG back to running or compensating.
UPDATE azync_dags SET
    state = CASE WHEN state IN ('suspended', 'paused')
                 THEN CASE WHEN %(comps)s THEN 'compensating' ELSE 'running' END
                 ELSE state END,
    failure_reason = CASE WHEN state IN ('suspended', 'paused') AND NOT %(comps)s
                          THEN NULL ELSE failure_reason END,
    updated_at = now()
WHERE id = %(id)s

-- name: pause_dag
-- A running DAG paused with a reason.
UPDATE azync_dags SET state = 'paused', failure_reason = %(reason)s, updated_at = now()
WHERE id = %(id)s AND state = 'running'

-- name: pause_tasks
-- A DAG's pending and scheduled tasks paused.
UPDATE azync_jobs SET state = 'paused', updated_at = now()
WHERE dag_id = %s AND source = 'dag' AND state IN ('pending', 'scheduled')

-- name: cancel_dag
-- A DAG cancelled, or marked to end cancelled once its compensation settles.
-- A compensating DAG keeps compensating; cancel_requested makes CompleteDAGs land
-- it on cancelled instead of failed. The CASEs read the pre-update state.
UPDATE azync_dags SET
    cancel_requested = true,
    state = CASE WHEN state = 'compensating' THEN state ELSE 'cancelled' END,
    completed_at = CASE WHEN state = 'compensating' THEN completed_at ELSE now() END,
    updated_at = now()
WHERE id = %s

-- name: vacuum_dags
-- The terminal DAGs completed before the cutoff deleted.
-- Jobs, edges and inbox rows cascade through their foreign keys.
DELETE FROM azync_dags
WHERE state IN ('succeeded', 'failed', 'cancelled')
  AND completed_at IS NOT NULL
  AND completed_at < now() - %s * interval '1 microsecond'
