// Command riverdemo runs the real River clients of qctl's River demo
// (qctl/systems/river/standin.py Workload): River's own clients, working the jobs the demo
// inserts into River's schema.
//
// It reads one JSON line on stdin (dsn, schema, clients, queues, application), starts a
// River client per name in clients on the schema (its search_path), writes "ready" on
// stdout, and runs until stdin closes; then each client stops as an application's does
// on shutdown (running jobs are given a moment, then cancelled).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// settings is the demo's one line on stdin.
type settings struct {
	DSN         string         `json:"dsn"`
	Schema      string         `json:"schema"`
	Clients     []string       `json:"clients"`
	Queues      map[string]int `json:"queues"` // queue -> MaxWorkers
	Application string         `json:"application"`
}

// kind names one of the demo's job kinds (standin.KINDS): River registers a worker per
// args type.
type kind interface{ name() string }

type thumbnailRender struct{}
type cacheWarm struct{}
type emailSend struct{}
type emailDigest struct{}
type reportBuild struct{}

func (thumbnailRender) name() string { return "thumbnail_render" }
func (cacheWarm) name() string       { return "cache_warm" }
func (emailSend) name() string       { return "email_send" }
func (emailDigest) name() string     { return "email_digest" }
func (reportBuild) name() string     { return "report_build" }

// demoArgs say what the worker does with a job (standin.Workload's producer): on its
// first attempt it snoozes Snooze seconds when asked, then takes Seconds (ended early by
// a cancel), fails with Error while its attempt is within Fails, and cancels itself with
// Cancel as reason when that is given.
type demoArgs[K kind] struct {
	N       int     `json:"n"`
	Seconds float64 `json:"seconds"`
	Fails   int     `json:"fails,omitempty"`
	Error   string  `json:"error,omitempty"`
	Snooze  float64 `json:"snooze,omitempty"`
	Cancel  string  `json:"cancel,omitempty"`
}

func (demoArgs[K]) Kind() string { return (*new(K)).name() }

func work[K kind](ctx context.Context, job *river.Job[demoArgs[K]]) error {
	a := job.Args
	if a.Snooze > 0 && !snoozed(job.Metadata) {
		return river.JobSnooze(seconds(a.Snooze))
	}
	select {
	case <-time.After(seconds(a.Seconds)):
	case <-ctx.Done(): // River's JobCancel, or the client's stop
		return ctx.Err()
	}
	if job.Attempt <= a.Fails {
		return errors.New(a.Error)
	}
	if a.Cancel != "" {
		return river.JobCancel(errors.New(a.Cancel))
	}
	return nil
}

// snoozed: River counts a job's snoozes in its metadata ("snoozes").
func snoozed(metadata []byte) bool {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	return json.Unmarshal(metadata, &m) == nil && m.Snoozes > 0
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func addWorker[K kind](workers *river.Workers) {
	river.AddWorker(workers, river.WorkFunc(work[K]))
}

func main() {
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		fail("settings", err)
	}
	var s settings
	if err := json.Unmarshal(line, &s); err != nil {
		fail("settings", err)
	}
	ctx := context.Background()
	config, err := pgxpool.ParseConfig(s.DSN)
	if err != nil {
		fail("dsn", err)
	}
	config.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{s.Schema}.Sanitize()
	config.ConnConfig.RuntimeParams["application_name"] = s.Application
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		fail("connect", err)
	}
	defer pool.Close()

	workers := river.NewWorkers()
	addWorker[thumbnailRender](workers)
	addWorker[cacheWarm](workers)
	addWorker[emailSend](workers)
	addWorker[emailDigest](workers)
	addWorker[reportBuild](workers)
	queues := map[string]river.QueueConfig{}
	for name, n := range s.Queues {
		queues[name] = river.QueueConfig{MaxWorkers: n}
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	clients := []*river.Client[pgx.Tx]{}
	for _, id := range s.Clients {
		client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
			ID:      id,
			Logger:  quiet,
			Queues:  queues,
			Workers: workers,
		})
		if err != nil {
			fail("client "+id, err)
		}
		if err := client.Start(ctx); err != nil {
			fail("start "+id, err)
		}
		clients = append(clients, client)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, in)
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var stopped sync.WaitGroup
	for _, client := range clients {
		stopped.Go(func() {
			if err := client.Stop(stopCtx); err != nil {
				fmt.Fprintln(os.Stderr, "riverdemo: stop:", err)
			}
		})
	}
	stopped.Wait()
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "riverdemo: %s: %v\n", what, err)
	os.Exit(1)
}
