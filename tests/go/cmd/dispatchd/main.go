// Command dispatchd drives dispatch's own store (github.com/xraph/dispatch, store/postgres
// or store/sqlite) as an application would, for qctl's tests: its migrator creates the
// schema, and its producer, worker and scheduler calls write the rows qctl then reads and
// operates.
//
// It speaks JSON lines: one request object a line on stdin ({"op": "...", ...}), one
// answer a line on stdout ({"ok": true, ...} or {"ok": false, "error": "..."}). The
// database comes from the first argument: a pgx DSN (its search_path picks the schema),
// or sqlite:PATH for dispatch's SQLite store on that file.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/xraph/dispatch"
	"github.com/xraph/dispatch/backoff"
	"github.com/xraph/dispatch/cluster"
	"github.com/xraph/dispatch/cron"
	"github.com/xraph/dispatch/dlq"
	"github.com/xraph/dispatch/engine"
	"github.com/xraph/dispatch/id"
	"github.com/xraph/dispatch/job"
	dstore "github.com/xraph/dispatch/store"
	"github.com/xraph/dispatch/store/postgres"
	"github.com/xraph/dispatch/store/sqlite"
	"github.com/xraph/dispatch/worker"
	"github.com/xraph/dispatch/workflow"
	"github.com/xraph/grove"
	"github.com/xraph/grove/drivers/pgdriver"
	"github.com/xraph/grove/drivers/sqlitedriver"
)

type request struct {
	Op         string          `json:"op"`
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Queue      string          `json:"queue"`
	Queues     []string        `json:"queues"`
	Payload    json.RawMessage `json:"payload"`
	Priority   int             `json:"priority"`
	MaxRetries *int            `json:"max_retries"`
	Limit      int             `json:"limit"`
	Error      string          `json:"error"`
	WorkerID   string          `json:"worker_id"`
	JobName    string          `json:"job_name"`
	Schedule   string          `json:"schedule"`
	Hostname   string          `json:"hostname"`
	Before     time.Time       `json:"before"`
	RunAt      time.Time       `json:"run_at"`
}

type harness struct {
	store  dstore.Store
	engine *engine.Engine
	// The jobs this worker holds, as dequeued: a worker settles the job it was handed.
	// (Reading one back is no option at v0.1.0: the PostgreSQL store's GetJob builds
	// "... LIMIT 1" into invalid SQL.)
	held map[string]*job.Job
	// run executes a held job as dispatch's worker pool does (worker/executor.go:
	// completed, retrying, or failed and pushed to the DLQ once its retries are spent);
	// its handler returns outcome. No backoff, so a retrying job is due at once.
	run     *worker.Executor
	outcome error
	sched   *scheduler
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dispatchd DSN")
		os.Exit(2)
	}
	ctx := context.Background()
	db, store, err := open(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "dispatchd: open:", err)
		os.Exit(1)
	}
	defer db.Close()
	d, err := dispatch.New(dispatch.WithStore(store))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dispatchd: dispatcher:", err)
		os.Exit(1)
	}
	eng, err := engine.Build(d)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dispatchd: engine:", err)
		os.Exit(1)
	}
	h := &harness{store: store, engine: eng, held: map[string]*job.Job{}}
	h.run = worker.NewExecutor(
		eng.Registry(), eng.Extensions(), store, eng.DLQService(), backoff.NewConstant(0),
		slog.Default(),
	)

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		answer := map[string]any{}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			answer["error"] = "bad request: " + err.Error()
		} else if err := h.do(ctx, req, answer); err != nil {
			answer["error"] = err.Error()
		}
		answer["ok"] = answer["error"] == nil
		if err := out.Encode(answer); err != nil {
			os.Exit(1)
		}
	}
}

// open opens the store the DSN names: dispatch's SQLite store for sqlite:PATH (busy
// waits up to 10 s, as an application sharing the file with other writers sets), else
// its PostgreSQL store.
func open(ctx context.Context, dsn string) (*grove.DB, dstore.Store, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		drv := sqlitedriver.New()
		if err := drv.Open(ctx, "file:"+path+"?_pragma=busy_timeout(10000)"); err != nil {
			return nil, nil, err
		}
		db, err := grove.Open(drv)
		if err != nil {
			return nil, nil, err
		}
		return db, sqlite.New(db), nil
	}
	drv := pgdriver.New()
	if err := drv.Open(ctx, dsn); err != nil {
		return nil, nil, err
	}
	db, err := grove.Open(drv)
	if err != nil {
		return nil, nil, err
	}
	return db, postgres.New(db), nil
}

func (h *harness) do(ctx context.Context, req request, answer map[string]any) error {
	switch req.Op {
	case "migrate":
		// grove's migration lock is pg_try_advisory_lock(1) (pgmigrate AcquireLock): one
		// key for the whole database, refused at once while any other process migrates
		// any schema there, as other test processes on the shared test database do. Wait
		// for it, up to a minute, as an application restarting would.
		for tries := 1; ; tries++ {
			err := h.store.Migrate(ctx)
			if err == nil || tries == 240 || !strings.Contains(err.Error(), "migration lock is held") {
				return err
			}
			time.Sleep(250 * time.Millisecond)
		}
	case "enqueue":
		// The producer's path: dispatch.Enqueue marshals the payload to JSON and hands it
		// to EnqueueRaw, which fills in the defaults (queue "default", 3 retries).
		payload := []byte(req.Payload)
		if len(payload) == 0 {
			payload = []byte("null")
		}
		opts := []job.Option{job.WithPriority(req.Priority)}
		if req.Queue != "" {
			opts = append(opts, job.WithQueue(req.Queue))
		}
		if req.MaxRetries != nil {
			opts = append(opts, job.WithMaxRetries(*req.MaxRetries))
		}
		if !req.RunAt.IsZero() {
			opts = append(opts, job.WithRunAt(req.RunAt))
		}
		j, err := h.engine.EnqueueRaw(ctx, req.Name, payload, opts...)
		if err != nil {
			return err
		}
		answer["id"] = j.ID.String()
	case "dequeue":
		jobs, err := h.store.DequeueJobs(ctx, req.Queues, req.Limit)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			h.held[j.ID.String()] = j
		}
		answer["jobs"] = jobs
	case "complete", "fail":
		// A worker's outcome, as dispatch's worker stores it: completed, or failed with
		// its error once the retries are spent (retrying, due at once, before).
		j, ok := h.held[req.ID]
		if !ok {
			return fmt.Errorf("job %s is not held by this worker", req.ID)
		}
		now := time.Now().UTC()
		if req.Op == "complete" {
			j.State, j.CompletedAt = job.StateCompleted, &now
		} else {
			j.LastError = req.Error
			j.RetryCount++
			j.State = job.StateRetrying
			if j.RetryCount > j.MaxRetries {
				j.State, j.CompletedAt = job.StateFailed, &now
			}
		}
		if err := h.store.UpdateJob(ctx, j); err != nil {
			return err
		}
		delete(h.held, req.ID) // a retrying job is dequeued again, by any worker
		answer["job"] = j
	case "run":
		j, ok := h.held[req.ID]
		if !ok {
			return fmt.Errorf("job %s is not held by this worker", req.ID)
		}
		h.outcome = nil
		if req.Error != "" {
			h.outcome = errors.New(req.Error)
		}
		engine.Register(h.engine, job.NewDefinition(j.Name,
			func(context.Context, json.RawMessage) error { return h.outcome }))
		_ = h.run.Execute(ctx, j) // a failing handler's error is the outcome asked for
		delete(h.held, req.ID)
		answer["job"] = j
	case "cron":
		// The application's registration (engine.RegisterCron): schedule validated, first
		// next_run_at computed, idempotent by name.
		return engine.RegisterCron(ctx, h.engine, &cron.Definition[json.RawMessage]{
			Name: req.Name, Schedule: req.Schedule, JobName: req.JobName, Queue: req.Queue,
			Payload: req.Payload,
		})
	case "cron_lock":
		// The scheduler's claim on an entry it fires (store/postgres/cron.go
		// AcquireCronLock), held for limit seconds by a fresh worker id.
		cronID, err := id.ParseCronID(req.ID)
		if err != nil {
			return err
		}
		ok, err := h.store.AcquireCronLock(ctx, cronID, id.NewWorkerID(), time.Duration(req.Limit)*time.Second)
		if err != nil {
			return err
		}
		answer["acquired"] = ok
	case "lead":
		// A registered worker's bid for the cron leadership, as cron/scheduler.go
		// tryLeadership makes it (store/postgres/cluster.go AcquireLeadership).
		workerID, err := id.ParseWorkerID(req.WorkerID)
		if err != nil {
			return err
		}
		ok, err := h.store.AcquireLeadership(ctx, workerID, 15*time.Second)
		if err != nil {
			return err
		}
		answer["acquired"] = ok
	case "workflow":
		// A workflow run as the application starts one (engine.StartWorkflow, run to its
		// end at once): one step a name in queues, the last failing with error if given.
		steps, failure := req.Queues, req.Error
		engine.RegisterWorkflow(h.engine, workflow.NewWorkflow(req.Name,
			func(wf *workflow.Workflow, _ json.RawMessage) error {
				for i, step := range steps {
					last := i == len(steps)-1
					if err := wf.Step(step, func(context.Context) error {
						if last && failure != "" {
							return errors.New(failure)
						}
						return nil
					}); err != nil {
						return err
					}
				}
				return nil
			}))
		run, err := engine.StartWorkflow(ctx, h.engine, req.Name, req.Payload)
		if err != nil {
			return err
		}
		answer["run"] = run
	case "worker":
		w := &cluster.Worker{
			ID: id.NewWorkerID(), Hostname: req.Hostname, Queues: req.Queues,
			Concurrency: req.Limit, State: cluster.WorkerActive,
			LastSeen: time.Now().UTC(), CreatedAt: time.Now().UTC(),
		}
		if err := h.store.RegisterWorker(ctx, w); err != nil {
			return err
		}
		answer["id"] = w.ID.String()
	case "replay_dlq":
		// dispatch's own replay (dlq/replay.go, behind its API's POST /dlq/:id/replay),
		// over a store whose GetDLQ reads the entry through ListDLQ: at v0.1.0 the
		// PostgreSQL GetDLQ fails as GetJob does ("... LIMIT 1" syntax error), so the
		// engine's own DLQService cannot replay anything on PostgreSQL.
		entryID, err := id.ParseDLQID(req.ID)
		if err != nil {
			return err
		}
		j, err := dlq.NewService(listedDLQ{h.store}, h.store).Replay(ctx, entryID)
		if err != nil {
			return err
		}
		answer["job"] = j
	case "engine_replay_dlq":
		// The engine's own DLQ service, unchanged (fails at v0.1.0; see replay_dlq).
		entryID, err := id.ParseDLQID(req.ID)
		if err != nil {
			return err
		}
		if _, err := h.engine.DLQService().Replay(ctx, entryID); err != nil {
			return err
		}
	case "purge_dlq":
		n, err := h.engine.DLQService().DLQStore().PurgeDLQ(ctx, req.Before)
		if err != nil {
			return err
		}
		answer["purged"] = n
	case "sched_start":
		h.sched = startScheduler(h)
	case "sched_pause":
		entries, err := h.sched.pause()
		if err != nil {
			return err
		}
		listed := []map[string]any{}
		for _, e := range entries {
			listed = append(listed, map[string]any{"name": e.Name, "enabled": e.Enabled})
		}
		answer["entries"] = listed
	case "sched_resume":
		return h.sched.resume()
	case "sched_stop":
		return h.sched.stop(ctx)
	default:
		return fmt.Errorf("unknown op %q", req.Op)
	}
	return nil
}

// listedDLQ is dispatch's store with GetDLQ answered from ListDLQ.
type listedDLQ struct{ dstore.Store }

func (s listedDLQ) GetDLQ(ctx context.Context, entryID id.DLQID) (*dlq.Entry, error) {
	entries, err := s.ListDLQ(ctx, dlq.ListOpts{})
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.ID == entryID {
			return e, nil
		}
	}
	return nil, dispatch.ErrDLQNotFound
}

// scheduler is dispatch's own cron scheduler (cron/scheduler.go: each tick lists the
// entries and fires every enabled due one under its lock, the fire ending with the
// whole entry written back) over this store's cron entries, with one change: the
// cluster store says this worker leads. At v0.1.0 the stores' AcquireLeadership fails
// on its own leader check (store/postgres/cluster.go scans the leader's id into a
// string, which grove refuses), so no process ever leads and nothing fires. A test
// can stop a tick right after it read the entries (pause) and let it go on (resume),
// to put a write between the scheduler's read and its fire.
type scheduler struct {
	*cron.Scheduler
	gate *gate
}

func startScheduler(h *harness) *scheduler {
	self := id.NewWorkerID()
	g := &gate{
		Store:  h.store,
		listed: make(chan []*cron.Entry),
		resume: make(chan struct{}),
		ticked: make(chan struct{}, 1),
	}
	enqueue := func(ctx context.Context, name string, payload []byte, opts ...job.Option) (id.JobID, error) {
		j, err := h.engine.EnqueueRaw(ctx, name, payload, opts...)
		if err != nil {
			return id.JobID{}, err
		}
		return j.ID, nil
	}
	s := cron.NewScheduler(g, leading{h.store, self}, enqueue, nil, self, slog.Default(),
		cron.WithTickInterval(50*time.Millisecond))
	_ = s.Start(context.Background())
	return &scheduler{s, g}
}

// pause stops the next tick right after its listing, and returns what it read.
func (s *scheduler) pause() ([]*cron.Entry, error) {
	s.gate.mu.Lock()
	s.gate.armed = true
	s.gate.mu.Unlock()
	select {
	case entries := <-s.gate.listed:
		return entries, nil
	case <-time.After(10 * time.Second):
		return nil, errors.New("the scheduler did not tick")
	}
}

// resume lets the paused tick go on, and returns once it ended (the next tick began).
func (s *scheduler) resume() error {
	select {
	case <-s.gate.ticked:
	default:
	}
	s.gate.resume <- struct{}{}
	select {
	case <-s.gate.ticked:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("the paused tick did not end")
	}
}

// stop ends the scheduler, a paused tick first let go (it would wait for ever).
func (s *scheduler) stop(ctx context.Context) error {
	s.gate.mu.Lock()
	s.gate.armed = false
	s.gate.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- s.Stop(ctx) }()
	for {
		select {
		case err := <-done:
			return err
		case s.gate.resume <- struct{}{}:
		}
	}
}

// gate is the cron store with ListCrons that can be held right after it read.
type gate struct {
	cron.Store
	mu     sync.Mutex
	armed  bool
	listed chan []*cron.Entry
	resume chan struct{}
	ticked chan struct{}
}

func (g *gate) ListCrons(ctx context.Context) ([]*cron.Entry, error) {
	entries, err := g.Store.ListCrons(ctx)
	g.mu.Lock()
	armed := g.armed && err == nil
	g.armed = g.armed && !armed
	g.mu.Unlock()
	select {
	case g.ticked <- struct{}{}:
	default:
	}
	if armed {
		g.listed <- entries
		<-g.resume
	}
	return entries, err
}

// leading is the cluster store with this worker as the leader.
type leading struct {
	cluster.Store
	self id.WorkerID
}

func (l leading) GetLeader(context.Context) (*cluster.Worker, error) {
	return &cluster.Worker{ID: l.self, State: cluster.WorkerActive}, nil
}

func (l leading) AcquireLeadership(context.Context, id.WorkerID, time.Duration) (bool, error) {
	return true, nil
}

func (l leading) RenewLeadership(context.Context, id.WorkerID, time.Duration) (bool, error) {
	return true, nil
}
