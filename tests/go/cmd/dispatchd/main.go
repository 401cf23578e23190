// Command dispatchd drives dispatch's own PostgreSQL store (github.com/xraph/dispatch,
// store/postgres) as an application would, for qctl's tests: its migrator creates the
// schema, and its producer and worker calls write the rows qctl then reads and operates.
//
// It speaks JSON lines: one request object a line on stdin ({"op": "...", ...}), one
// answer a line on stdout ({"ok": true, ...} or {"ok": false, "error": "..."}). The
// database comes from the first argument, a pgx DSN (its search_path picks the schema).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/xraph/dispatch"
	"github.com/xraph/dispatch/engine"
	"github.com/xraph/dispatch/job"
	"github.com/xraph/dispatch/store/postgres"
	"github.com/xraph/grove"
	"github.com/xraph/grove/drivers/pgdriver"
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
}

type harness struct {
	store  *postgres.Store
	engine *engine.Engine
	// The jobs this worker holds, as dequeued: a worker settles the job it was handed.
	// (Reading one back is no option at v0.1.0: the PostgreSQL store's GetJob builds
	// "... LIMIT 1" into invalid SQL.)
	held map[string]*job.Job
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dispatchd DSN")
		os.Exit(2)
	}
	ctx := context.Background()
	drv := pgdriver.New()
	if err := drv.Open(ctx, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "dispatchd: open:", err)
		os.Exit(1)
	}
	db, err := grove.Open(drv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dispatchd: grove:", err)
		os.Exit(1)
	}
	defer db.Close()
	store := postgres.New(db)
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
	h := harness{store: store, engine: eng, held: map[string]*job.Job{}}

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

func (h harness) do(ctx context.Context, req request, answer map[string]any) error {
	switch req.Op {
	case "migrate":
		return h.store.Migrate(ctx)
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
	default:
		return fmt.Errorf("unknown op %q", req.Op)
	}
	return nil
}
