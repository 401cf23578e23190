-- Declared DAG workflows (DAGStore) on SQLite: the same tables and semantics as the
-- PostgreSQL backend (azync's driver/azyncpgx/dag_store.go). Writers are serialised by
-- BEGIN IMMEDIATE, so the header "lock" is simply reading it inside the write
-- transaction. :now is the transaction clock (µs since the epoch). Compensation keys
-- are matched with GLOB 'comp:*' because LIKE is case-insensitive here.

-- name: dag_state
-- A DAG's state.
SELECT state FROM azync_dags WHERE id = :id

-- name: insert_dag
-- A DAG header inserted unless a live DAG of the same name holds its idempotency key.
INSERT INTO azync_dags (id, name, state, on_failure, idempotency_key, meta, created_at, updated_at)
VALUES (:id, :name, 'running', :on_failure, :idempotency_key, :meta, :now, :now)
ON CONFLICT (name, idempotency_key)
    WHERE idempotency_key IS NOT NULL
      AND state IN ('running', 'suspended', 'compensating', 'paused')
DO NOTHING
RETURNING id

-- name: live_dag_by_key
-- The live DAG of a name holding an idempotency key.
SELECT id FROM azync_dags
WHERE name = :name AND idempotency_key = :key
  AND state IN ('running', 'suspended', 'compensating', 'paused')

-- name: insert_task
-- One task job of a DAG inserted.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, payload, meta,
     enqueued_at, created_at, updated_at, dag_id, task_key, compensation_kind,
     compensation_payload, signal_name, ignore_dead_deps, snooze_budget)
VALUES (:id, 'dag', :kind, :state, :now + :offset, :max_attempts, :explicit, :payload, :meta,
        :now, :now, :now, :dag_id, :task_key, :compensation_kind,
        :compensation_payload, :signal_name, :ignore_dead_deps, :snooze_budget)

-- name: insert_dep
-- One dependency edge of a DAG task recorded.
INSERT INTO azync_dag_deps (dag_id, task_key, depends_on_key) VALUES (?, ?, ?)

-- name: insert_signal
-- A signal added to a DAG's inbox unless its message id was seen.
INSERT INTO azync_dag_signals (id, dag_id, name, message_id, payload, created_at)
VALUES (:id, :dag_id, :name, :message_id, :payload, :now)
ON CONFLICT (dag_id, name, message_id) WHERE message_id IS NOT NULL DO NOTHING
RETURNING id

-- name: deliver_signal_now
-- A signal handed to the DAG's waiting $signal task or scheduled $sleep of its name.
-- A waiting $signal task completes with the payload as its result; a scheduled
-- $sleep is woken (due now). Both match the task's signal_name, not its key.
UPDATE azync_jobs SET
    state = CASE kind WHEN '$signal' THEN 'succeeded' ELSE state END,
    result = CASE kind WHEN '$signal' THEN :payload ELSE result END,
    completed_at = CASE kind WHEN '$signal' THEN :now ELSE completed_at END,
    run_at = CASE kind WHEN '$sleep' THEN :now ELSE run_at END,
    updated_at = :now
WHERE source = 'dag' AND dag_id = :dag_id AND signal_name = :name
  AND ((kind = '$signal' AND state = 'waiting') OR (kind = '$sleep' AND state = 'scheduled'))

-- name: consume_signal
-- An inbox signal marked consumed.
UPDATE azync_dag_signals SET consumed = 1 WHERE id = ?

-- name: buffered_deliveries
-- Each deliverable task's oldest unconsumed inbox signal.
-- Per deliverable task of a running or compensating DAG, its oldest unconsumed
-- inbox signal. CROSS JOIN fixes SQLite's join order to start from the inbox index:
-- the task condition has no index of its own and would otherwise scan every job.
SELECT task_id, signal_id, payload FROM (
    SELECT t.id AS task_id, s.id AS signal_id, s.payload,
           row_number() OVER (PARTITION BY t.id ORDER BY s.created_at, s.id) AS rn
    FROM azync_dag_signals s
    CROSS JOIN azync_dags d
    CROSS JOIN azync_jobs t
    WHERE NOT s.consumed
      AND d.id = s.dag_id AND d.state IN ('running', 'compensating')
      AND t.dag_id = s.dag_id AND t.signal_name = s.name AND t.source = 'dag'
      AND ((t.kind = '$signal' AND t.state = 'waiting')
        OR (t.kind = '$sleep' AND t.state = 'scheduled'))
)
WHERE rn = 1

-- name: hand_signal
-- A buffered signal handed to one waiting $signal task or scheduled $sleep.
UPDATE azync_jobs SET
    state = CASE kind WHEN '$signal' THEN 'succeeded' ELSE state END,
    result = CASE kind WHEN '$signal' THEN :payload ELSE result END,
    completed_at = CASE kind WHEN '$signal' THEN :now ELSE completed_at END,
    run_at = CASE kind WHEN '$sleep' THEN :now ELSE run_at END,
    updated_at = :now
WHERE id = :task_id

-- name: promote_unblocked
-- The blocked tasks whose dependencies are all satisfied released.
-- A blocked task of a running or compensating DAG is released once none of its
-- edges lacks a satisfying dependency row (succeeded or skipped; dead or cancelled
-- too for an ignore_dead_deps task). An edge to a missing task never satisfies.
UPDATE azync_jobs AS t SET
    state = CASE t.kind WHEN '$signal' THEN 'waiting' WHEN '$sleep' THEN 'scheduled'
                        ELSE 'pending' END,
    run_at = CASE t.kind
        WHEN '$signal' THEN t.run_at
        WHEN '$sleep' THEN :now + CAST(round(
            COALESCE(json_extract(t.payload, '$.sleepSeconds'), 0) * 1000000) AS INTEGER)
        ELSE :now END,
    updated_at = :now
WHERE t.source = 'dag' AND t.state = 'blocked'
  AND EXISTS (SELECT 1 FROM azync_dags d
              WHERE d.id = t.dag_id AND d.state IN ('running', 'compensating'))
  AND NOT EXISTS (
      SELECT 1 FROM azync_dag_deps e
      WHERE e.dag_id = t.dag_id AND e.task_key = t.task_key
        AND NOT EXISTS (
            SELECT 1 FROM azync_jobs up
            WHERE up.dag_id = e.dag_id AND up.task_key = e.depends_on_key AND up.source = 'dag'
              AND (up.state IN ('succeeded', 'skipped')
                   OR (t.ignore_dead_deps AND up.state IN ('dead', 'cancelled')))))

-- name: complete_due_sleeps
-- The due $sleep tasks of running DAGs completed.
UPDATE azync_jobs AS t SET state = 'succeeded', completed_at = :now, updated_at = :now
WHERE t.source = 'dag' AND t.kind = '$sleep' AND t.state = 'scheduled' AND t.run_at <= :now
  AND EXISTS (SELECT 1 FROM azync_dags d WHERE d.id = t.dag_id AND d.state = 'running')

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
  AND NOT COALESCE((SELECT min(COALESCE(down.ignore_dead_deps, 0))
                    FROM azync_dag_deps e
                    LEFT JOIN azync_jobs down
                      ON down.dag_id = e.dag_id AND down.task_key = e.task_key
                     AND down.source = 'dag'
                    WHERE e.dag_id = t.dag_id AND e.depends_on_key = t.task_key), 0)

-- name: suspend_running_dag
-- A running DAG suspended with a reason.
UPDATE azync_dags SET state = 'suspended', failure_reason = :reason, updated_at = :now
WHERE id = :id AND state = 'running'

-- name: cancel_remaining_tasks
-- A DAG's unsettled tasks, active ones aside, cancelled.
-- Active tasks keep their lease and settle on their own.
UPDATE azync_jobs SET state = 'cancelled', completed_at = :now, updated_at = :now
WHERE dag_id = :id AND source = 'dag'
  AND state IN ('pending', 'scheduled', 'blocked', 'waiting', 'paused')

-- name: has_compensations
-- Whether a DAG's compensation chain exists.
SELECT EXISTS (SELECT 1 FROM azync_jobs
               WHERE dag_id = ? AND source = 'dag' AND task_key GLOB 'comp:*') AS present

-- name: compensation_candidates
-- The succeeded tasks of a DAG that declared a compensation, newest completion first.
-- Succeeded (never skipped) original tasks that declared a compensation, newest
-- completion first: the chain undoes work in reverse order.
SELECT task_key, compensation_kind
FROM azync_jobs
WHERE dag_id = ? AND source = 'dag' AND state = 'succeeded'
  AND compensation_kind IS NOT NULL AND compensation_kind <> ''
  AND task_key NOT GLOB 'comp:*'
ORDER BY completed_at DESC, created_at DESC, id DESC

-- name: insert_compensation
-- The compensation task comp:<key> of one succeeded task inserted.
-- comp:<key> copies meta and the budget of the original; it has no compensation,
-- signal, tolerance or snooze budget of its own.
INSERT INTO azync_jobs
    (id, source, kind, state, run_at, max_attempts, max_attempts_explicit, payload, meta,
     enqueued_at, created_at, updated_at, dag_id, task_key)
SELECT :id, 'dag', o.compensation_kind, :state, :now, o.max_attempts,
       o.max_attempts_explicit, o.compensation_payload, o.meta, :now, :now, :now, o.dag_id,
       :comp_key
FROM azync_jobs o
WHERE o.dag_id = :dag_id AND o.source = 'dag' AND o.task_key = :task_key

-- name: settle_after_compensation_start
-- A DAG whose failure policy compensates moved to compensating, or to failed with nothing to undo.
-- With nothing to compensate the DAG fails at once; otherwise it compensates.
-- A NULL reason keeps the recorded one (the manual verb leaves it unchanged).
UPDATE azync_dags SET
    state = CASE WHEN :comps THEN 'compensating' ELSE 'failed' END,
    failure_reason = COALESCE(:reason, failure_reason),
    completed_at = CASE WHEN :comps THEN completed_at ELSE :now END,
    updated_at = :now
WHERE id = :id

-- name: complete_running_succeeded
-- The running DAGs whose tasks all succeeded or were skipped completed as succeeded.
UPDATE azync_dags AS d SET state = 'succeeded', completed_at = :now, updated_at = :now
WHERE d.state = 'running'
  AND EXISTS (SELECT 1 FROM azync_jobs j WHERE j.dag_id = d.id AND j.source = 'dag')
  AND NOT EXISTS (SELECT 1 FROM azync_jobs j
                  WHERE j.dag_id = d.id AND j.source = 'dag'
                    AND j.state NOT IN ('succeeded', 'skipped'))

-- name: tolerated_dead_tasks
-- The dead tasks of running DAGs whose tasks all settled, every dead one tolerated.
-- The dead tasks of running DAGs whose tasks all settled with at least one dead,
-- every dead task tolerated (it has dependents and all of them ignore dead deps). A
-- non-tolerated death is left for the failure policy, so its compensations are
-- never skipped.
SELECT d.id AS dag_id, dt.task_key
FROM azync_dags d
JOIN azync_jobs dt ON dt.dag_id = d.id AND dt.source = 'dag' AND dt.state = 'dead'
WHERE d.state = 'running'
  AND NOT EXISTS (SELECT 1 FROM azync_jobs j
                  WHERE j.dag_id = d.id AND j.source = 'dag'
                    AND j.state NOT IN ('succeeded', 'skipped', 'dead'))
  AND NOT EXISTS (
      SELECT 1 FROM azync_jobs x
      WHERE x.dag_id = d.id AND x.source = 'dag' AND x.state = 'dead'
        AND NOT COALESCE((SELECT min(COALESCE(down.ignore_dead_deps, 0))
                          FROM azync_dag_deps e
                          LEFT JOIN azync_jobs down
                            ON down.dag_id = e.dag_id AND down.task_key = e.task_key
                           AND down.source = 'dag'
                          WHERE e.dag_id = x.dag_id AND e.depends_on_key = x.task_key), 0))

-- name: fail_dag
-- A DAG completed as failed with a reason.
UPDATE azync_dags SET state = 'failed', failure_reason = :reason, completed_at = :now,
                      updated_at = :now
WHERE id = :id

-- name: complete_compensating_suspend
-- The compensating DAGs with a dead compensation task suspended.
-- A dead compensation parks the DAG for an operator, unless a cancel asked for it.
UPDATE azync_dags AS d SET state = 'suspended', updated_at = :now
WHERE d.state = 'compensating' AND NOT d.cancel_requested
  AND EXISTS (SELECT 1 FROM azync_jobs j
              WHERE j.dag_id = d.id AND j.source = 'dag'
                AND j.task_key GLOB 'comp:*' AND j.state = 'dead')

-- name: complete_compensating_settle
-- The compensating DAGs whose compensation chain settled completed as failed or cancelled.
UPDATE azync_dags AS d SET
    state = CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'failed' END,
    completed_at = :now, updated_at = :now
WHERE d.state = 'compensating'
  AND EXISTS (SELECT 1 FROM azync_jobs j
              WHERE j.dag_id = d.id AND j.source = 'dag' AND j.task_key GLOB 'comp:*')
  AND NOT EXISTS (SELECT 1 FROM azync_jobs j
                  WHERE j.dag_id = d.id AND j.source = 'dag' AND j.task_key GLOB 'comp:*'
                    AND j.state NOT IN ('succeeded', 'cancelled', 'dead'))

-- name: task_results
-- The results of a DAG's succeeded or skipped tasks (all, or the given keys).
SELECT task_key, result, state = 'skipped' AS skipped
FROM azync_jobs
WHERE dag_id = :dag_id AND source = 'dag' AND state IN ('succeeded', 'skipped')
  AND (:all OR task_key IN (SELECT value FROM json_each(:keys)))

-- name: ack_task_result
-- A leased DAG task settled as succeeded with its result, fenced on its lease token.
UPDATE azync_jobs SET
    state = 'succeeded', result = :result, lease_until = NULL, lease_token = NULL,
    completed_at = :now, updated_at = :now
WHERE id = :id AND state = 'active' AND lease_token = :token
RETURNING source, kind

-- name: get_dag
-- One DAG header by id.
SELECT id, name, state, on_failure, idempotency_key, failure_reason, meta,
       created_at, updated_at, completed_at
FROM azync_dags WHERE id = ?

-- name: count_dags
-- How many DAGs match {where} (listing.header_where).
SELECT count(*) AS n FROM azync_dags
WHERE {where}

-- name: list_dags
-- A page of DAG headers matching {where} (filters and keyset position), newest first.
-- A negative limit is no limit.
SELECT id, name, state, on_failure, idempotency_key, failure_reason, meta,
       created_at, updated_at, completed_at
FROM azync_dags
WHERE {where}
ORDER BY created_at DESC, id DESC
LIMIT :limit OFFSET :offset

-- name: dag_exists
-- Whether a DAG exists.
SELECT EXISTS (SELECT 1 FROM azync_dags WHERE id = ?) AS present

-- name: dag_tasks
-- Every task job of one DAG, compensation tasks included, in creation order.
SELECT {jobs} FROM azync_jobs WHERE dag_id = ? AND source = 'dag'
ORDER BY created_at, id

-- name: dag_deps
-- A DAG's dependency edges, sorted.
SELECT task_key, depends_on_key FROM azync_dag_deps
WHERE dag_id = ? ORDER BY task_key, depends_on_key

-- name: dag_name_state_counts
-- How many DAGs each (name, state) has.
SELECT name, state, count(*) AS n FROM azync_dags GROUP BY name, state

-- name: dag_task_counts
-- How many tasks each of the given DAGs has per state.
SELECT dag_id, state, count(*) AS n FROM azync_jobs
WHERE source = 'dag' AND dag_id IN (SELECT value FROM json_each(?))
GROUP BY dag_id, state

-- name: missing_tasks
-- The task keys of this DAG's edges without a job row, '' when it has no task row.
-- Such rows were vacuumed or deleted: a retry must not settle a DAG without them.
SELECT k.key FROM (
    SELECT task_key AS key FROM azync_dag_deps WHERE dag_id = :id
    UNION SELECT depends_on_key FROM azync_dag_deps WHERE dag_id = :id
) k
WHERE NOT EXISTS (SELECT 1 FROM azync_jobs j WHERE j.dag_id = :id AND j.task_key = k.key)
UNION ALL
SELECT '' WHERE NOT EXISTS (SELECT 1 FROM azync_jobs j WHERE j.dag_id = :id)
ORDER BY 1

-- name: reset_dead_tasks
-- A DAG's dead tasks back to pending, only the compensation links once a chain exists.
-- Once a compensation chain exists only its dead links reset: original tasks never
-- rerun after compensation started. The stamped deadline goes too, so a retried
-- wait gets a fresh snooze budget.
UPDATE azync_jobs SET
    state = 'pending', run_at = :now, attempt = 0, reap_count = 0, last_error = NULL,
    failed_at = NULL, deadline_at = NULL, started_at = NULL, updated_at = :now
WHERE dag_id = :id AND source = 'dag' AND state = 'dead'
  AND (NOT :comps OR task_key GLOB 'comp:*')

-- name: unpause_tasks
-- A DAG's paused tasks back to pending, or scheduled while not yet due, deadlines cleared.
-- Time spent paused never burns a snooze budget: the deadline re-stamps later.
UPDATE azync_jobs SET
    state = CASE WHEN run_at <= :now THEN 'pending' ELSE 'scheduled' END,
    deadline_at = NULL, updated_at = :now
WHERE dag_id = :id AND source = 'dag' AND state = 'paused'

-- name: resume_dag
-- A suspended or paused DAG back to running or compensating.
UPDATE azync_dags SET
    state = CASE WHEN state IN ('suspended', 'paused')
                 THEN CASE WHEN :comps THEN 'compensating' ELSE 'running' END
                 ELSE state END,
    failure_reason = CASE WHEN state IN ('suspended', 'paused') AND NOT :comps
                          THEN NULL ELSE failure_reason END,
    updated_at = :now
WHERE id = :id

-- name: pause_dag
-- A running DAG paused with a reason.
UPDATE azync_dags SET state = 'paused', failure_reason = :reason, updated_at = :now
WHERE id = :id AND state = 'running'

-- name: pause_tasks
-- A DAG's pending and scheduled tasks paused.
UPDATE azync_jobs SET state = 'paused', updated_at = :now
WHERE dag_id = :id AND source = 'dag' AND state IN ('pending', 'scheduled')

-- name: cancel_dag
-- A DAG cancelled, or marked to end cancelled once its compensation settles.
-- A compensating DAG keeps compensating; cancel_requested makes CompleteDAGs land
-- it on cancelled instead of failed. The CASEs read the pre-update state.
UPDATE azync_dags SET
    cancel_requested = 1,
    state = CASE WHEN state = 'compensating' THEN state ELSE 'cancelled' END,
    completed_at = CASE WHEN state = 'compensating' THEN completed_at ELSE :now END,
    updated_at = :now
WHERE id = :id

-- name: vacuum_dags
-- The terminal DAGs completed before the cutoff deleted.
-- Jobs, edges and inbox rows cascade through their foreign keys.
DELETE FROM azync_dags
WHERE state IN ('succeeded', 'failed', 'cancelled')
  AND completed_at IS NOT NULL
  AND completed_at < :now - :retention
