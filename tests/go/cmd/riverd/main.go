// Command riverd drives River (github.com/riverqueue/river) through its public API as an
// application would, for qctl's tests: River's migrator creates the schema, an
// insert-only client inserts jobs and calls River's own job and queue functions, and a
// working client (started on request) fetches and works jobs with a worker whose
// behaviour each job's args choose.
//
// It speaks JSON lines: one request object a line on stdin ({"op": "...", ...}), one
// answer a line on stdout ({"ok": true, ...} or {"ok": false, "error": "..."}). The
// database comes from the first argument: a pgx DSN (riverpgxv5; its search_path picks
// the schema), or sqlite://PATH, a SQLite file (riversqlite over modernc.org/sqlite, the
// pure-Go SQLite; the file is made if missing).
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite"
)

// TestArgs are the args of every job the harness inserts: Mode is what the worker does.
type TestArgs struct {
	// "ok" (complete), "fail" (return an error: Note's text, else "harness failure"),
	// "snooze" (river.JobSnooze), "block" (wait until the job's context is cancelled,
	// then return its error).
	Mode string `json:"mode"`
	Note string `json:"note,omitempty"`
}

func (TestArgs) Kind() string { return "qctl_test" }

// testWorker works TestArgs and records each attempt it starts.
type testWorker struct {
	river.WorkerDefaults[TestArgs]
	h interface{ started(id int64) }
}

func (w *testWorker) Work(ctx context.Context, job *river.Job[TestArgs]) error {
	w.h.started(job.ID)
	switch job.Args.Mode {
	case "fail":
		if job.Args.Note != "" {
			return errors.New(job.Args.Note)
		}
		return errors.New("harness failure")
	case "snooze":
		return river.JobSnooze(time.Hour)
	case "block":
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

type request struct {
	Op          string          `json:"op"`
	ID          int64           `json:"id"`
	Queue       string          `json:"queue"`
	Queues      []string        `json:"queues"`
	Mode        string          `json:"mode"`
	Note        string          `json:"note"`
	N           int             `json:"n"`
	MaxAttempts int             `json:"max_attempts"`
	Priority    int             `json:"priority"`
	Tags        []string        `json:"tags"`
	Metadata    json.RawMessage `json:"metadata"`
	Unique      bool            `json:"unique"`
	States      []string        `json:"states"`
	Seconds     float64         `json:"seconds"`
}

// harness is one River application on one database, whichever River driver opens it
// (TTx: the driver's transaction type).
type harness[TTx any] struct {
	driver  func() riverdriver.Driver[TTx]
	client  *river.Client[TTx] // insert-only: River's job and queue functions
	worker  *river.Client[TTx] // working, once started
	workers *river.Workers

	mu   sync.Mutex
	runs map[int64]int // attempts started per job id
}

func (h *harness[TTx]) started(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs[id]++
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: riverd DSN|sqlite://PATH")
		os.Exit(2)
	}
	ctx := context.Background()
	if path, ok := strings.CutPrefix(os.Args[1], "sqlite://"); ok {
		db, err := openSQLite(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "riverd: open:", err)
			os.Exit(1)
		}
		defer db.Close()
		serve(ctx, func() riverdriver.Driver[*sql.Tx] { return riversqlite.New(db) })
		return
	}
	pool, err := pgxpool.New(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "riverd: open:", err)
		os.Exit(1)
	}
	defer pool.Close()
	serve(ctx, func() riverdriver.Driver[pgx.Tx] { return riverpgxv5.New(pool) })
}

// openSQLite opens the file as River's SQLite driver asks: one connection (SQLite has one
// writer; River's own clients then never wait on each other), and a busy timeout for the
// writers of other processes (qctl).
func openSQLite(path string) (*sql.DB, error) {
	query := url.Values{"_pragma": {"busy_timeout(10000)", "journal_mode(WAL)"}}
	db, err := sql.Open("sqlite", "file:"+path+"?"+query.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

func serve[TTx any](ctx context.Context, driver func() riverdriver.Driver[TTx]) {
	h := &harness[TTx]{driver: driver, runs: map[int64]int{}}
	h.workers = river.NewWorkers()
	river.AddWorker(h.workers, &testWorker{h: h})
	var err error
	h.client, err = river.NewClient(driver(), &river.Config{
		Logger:  quiet(),
		Workers: h.workers,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "riverd: client:", err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		answer := map[string]any{}
		err := json.Unmarshal(in.Bytes(), &req)
		if err == nil {
			err = h.do(ctx, &req, answer)
		}
		if err != nil {
			answer = map[string]any{"ok": false, "error": err.Error()}
		} else {
			answer["ok"] = true
		}
		if err := out.Encode(answer); err != nil {
			os.Exit(1)
		}
	}
	if h.worker != nil {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = h.worker.StopAndCancel(stopCtx)
	}
}

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func (h *harness[TTx]) do(ctx context.Context, req *request, answer map[string]any) error {
	switch req.Op {
	case "migrate":
		migrator, err := rivermigrate.New(h.driver(), nil)
		if err != nil {
			return err
		}
		res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
		if err != nil {
			return err
		}
		answer["versions"] = len(res.Versions)
	case "insert":
		return h.insert(ctx, req, answer)
	case "start":
		return h.start(ctx, req)
	case "stop":
		if h.worker == nil {
			return errors.New("no working client")
		}
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := h.worker.StopAndCancel(stopCtx)
		h.worker = nil
		return err
	case "runs":
		h.mu.Lock()
		runs := map[string]int{}
		for id, n := range h.runs {
			runs[fmt.Sprint(id)] = n
		}
		h.mu.Unlock()
		answer["runs"] = runs
	case "wait_started":
		deadline := time.Now().Add(time.Duration(req.Seconds * float64(time.Second)))
		for {
			h.mu.Lock()
			n := h.runs[req.ID]
			h.mu.Unlock()
			if n > 0 {
				answer["runs"] = n
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("job %d not started", req.ID)
			}
			time.Sleep(20 * time.Millisecond)
		}
	case "get":
		job, err := h.client.JobGet(ctx, req.ID)
		if err != nil {
			return err
		}
		answer["job"] = row(job)
	case "cancel":
		job, err := h.client.JobCancel(ctx, req.ID)
		if err != nil {
			return err
		}
		answer["job"] = row(job)
	case "retry":
		job, err := h.client.JobRetry(ctx, req.ID)
		if err != nil {
			return err
		}
		answer["job"] = row(job)
	case "delete":
		job, err := h.client.JobDelete(ctx, req.ID)
		if err != nil {
			return err
		}
		answer["job"] = row(job)
	case "queues_create":
		return h.queuesCreate(ctx, req)
	case "pause":
		return h.client.QueuePause(ctx, req.Queue, nil)
	case "resume":
		return h.client.QueueResume(ctx, req.Queue, nil)
	case "job_list":
		return h.jobList(ctx, req, answer)
	case "queue_list":
		res, err := h.client.QueueList(ctx, river.NewQueueListParams().First(10000))
		if err != nil {
			return err
		}
		queues := []map[string]any{}
		for _, q := range res.Queues {
			queues = append(queues, map[string]any{"name": q.Name, "paused": q.PausedAt != nil})
		}
		answer["queues"] = queues
	default:
		return fmt.Errorf("unknown op %q", req.Op)
	}
	return nil
}

func (h *harness[TTx]) insert(ctx context.Context, req *request, answer map[string]any) error {
	opts := &river.InsertOpts{
		Queue:       req.Queue,
		MaxAttempts: req.MaxAttempts,
		Priority:    req.Priority,
		Tags:        req.Tags,
		Metadata:    req.Metadata,
	}
	if req.Unique {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true}
	}
	if req.Seconds > 0 {
		opts.ScheduledAt = time.Now().Add(time.Duration(req.Seconds * float64(time.Second)))
	}
	mode := req.Mode
	if mode == "" {
		mode = "ok"
	}
	n := max(req.N, 1)
	params := make([]river.InsertManyParams, n)
	for i := range params {
		note := req.Note
		if n > 1 && note != "" {
			note = fmt.Sprintf("%s-%d", note, i)
		}
		params[i] = river.InsertManyParams{Args: TestArgs{Mode: mode, Note: note}, InsertOpts: opts}
	}
	res, err := h.client.InsertMany(ctx, params)
	if err != nil {
		return err
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	answer["ids"] = ids
	return nil
}

// start starts the working client on the given queues; it fetches often so that a test
// sees a pause or a resume within a second.
func (h *harness[TTx]) start(ctx context.Context, req *request) error {
	if h.worker != nil {
		return errors.New("a working client runs already")
	}
	queues := map[string]river.QueueConfig{}
	for _, q := range req.Queues {
		queues[q] = river.QueueConfig{MaxWorkers: 10}
	}
	worker, err := river.NewClient(h.driver(), &river.Config{
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 100 * time.Millisecond,
		Logger:            quiet(),
		Queues:            queues,
		Workers:           h.workers,
	})
	if err != nil {
		return err
	}
	if err := worker.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	h.worker = worker
	return nil
}

// queuesCreate gives queues their river_queue rows as River does: a client working them
// starts a producer for each, which registers its queue; the client is stopped once
// every row is there, so nothing changes afterwards.
func (h *harness[TTx]) queuesCreate(ctx context.Context, req *request) error {
	queues := map[string]river.QueueConfig{}
	for _, q := range req.Queues {
		queues[q] = river.QueueConfig{MaxWorkers: 1}
	}
	client, err := river.NewClient(h.driver(), &river.Config{
		Logger:  quiet(),
		Queues:  queues,
		Workers: h.workers,
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stopCtx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := h.client.QueueList(ctx, river.NewQueueListParams().First(10000))
		if err != nil {
			return err
		}
		found := map[string]bool{}
		for _, q := range res.Queues {
			found[q.Name] = true
		}
		missing := false
		for _, q := range req.Queues {
			missing = missing || !found[q]
		}
		if !missing {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("queues not registered")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jobList counts River's own JobList over every page: per state, and the ids.
func (h *harness[TTx]) jobList(ctx context.Context, req *request, answer map[string]any) error {
	params := river.NewJobListParams().First(10000)
	if req.Queue != "" {
		params = params.Queues(req.Queue)
	}
	if len(req.States) > 0 {
		states := make([]rivertype.JobState, len(req.States))
		for i, s := range req.States {
			states[i] = rivertype.JobState(s)
		}
		params = params.States(states...)
	}
	counts := map[string]int{}
	ids := []int64{}
	for {
		res, err := h.client.JobList(ctx, params)
		if err != nil {
			return err
		}
		for _, job := range res.Jobs {
			counts[string(job.State)]++
			ids = append(ids, job.ID)
		}
		if len(res.Jobs) < 10000 {
			break
		}
		params = params.After(res.LastCursor)
	}
	answer["counts"] = counts
	answer["ids"] = ids
	return nil
}

func row(job *rivertype.JobRow) map[string]any {
	return map[string]any{
		"id":           job.ID,
		"state":        string(job.State),
		"attempt":      job.Attempt,
		"max_attempts": job.MaxAttempts,
		"queue":        job.Queue,
		"metadata":     json.RawMessage(job.Metadata),
		"errors":       len(job.Errors),
	}
}
