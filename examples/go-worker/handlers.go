package main

import (
	"context"
	"fmt"
	"time"

	"ojs.example/ojspb"
)

// Job is what a handler sees of a delivered job; Args and Meta are plain
// JSON-native values (float64, string, bool, nil, []any, map[string]any).
type Job struct {
	ID      string
	Type    string
	Queue   string
	Args    []any
	Attempt int32
	Meta    map[string]any
}

// Handler runs one job. Its result (any JSON-native value) becomes the job's
// result; a *JobError fails the attempt with a structured error, any other
// error with type "handler_error". ctx is cancelled when the worker stops the
// job (cancelled, timed out, or the grace period of a shutdown ended).
type Handler func(ctx context.Context, job *Job) (any, error)

// JobError is a structured failure (ojs-core section 8), reported with Fail.
// Code overrides the job's retry policy (RETRY applies it; DISCARD,
// DEAD_LETTER and FAIL give up now).
type JobError struct {
	Type    string
	Message string
	Code    ojspb.HandlerCode
	Details map[string]any
}

func (e *JobError) Error() string { return e.Type + ": " + e.Message }

// handlers are the demo job types, by type.
var handlers = map[string]Handler{
	// echo returns its arguments.
	"echo": func(ctx context.Context, job *Job) (any, error) {
		return job.Args, nil
	},
	// fail always fails; args are [error type, message], both optional.
	"fail": func(ctx context.Context, job *Job) (any, error) {
		errorType, message := "DemoError", "failed on purpose"
		if len(job.Args) > 0 {
			errorType = fmt.Sprint(job.Args[0])
		}
		if len(job.Args) > 1 {
			message = fmt.Sprint(job.Args[1])
		}
		return nil, &JobError{Type: errorType, Message: message, Details: map[string]any{"attempt": job.Attempt}}
	},
	// flaky fails until attempt args[0] (default 2), then succeeds.
	"flaky": func(ctx context.Context, job *Job) (any, error) {
		succeedOn := int32(2)
		if n, ok := argNumber(job, 0); ok {
			succeedOn = int32(n)
		}
		if job.Attempt < succeedOn {
			return nil, &JobError{Type: "FlakyError", Message: fmt.Sprintf("attempt %d fails; attempt %d will succeed", job.Attempt, succeedOn)}
		}
		return map[string]any{"attempt": job.Attempt}, nil
	},
	// sleep sleeps args[0] milliseconds (default 1000), unless the job is stopped.
	"sleep": func(ctx context.Context, job *Job) (any, error) {
		ms, ok := argNumber(job, 0)
		if !ok {
			ms = 1000
		}
		timer := time.NewTimer(time.Duration(ms * float64(time.Millisecond)))
		defer timer.Stop()
		select {
		case <-timer.C:
			return map[string]any{"slept_ms": ms}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	},
}

func argNumber(job *Job, i int) (float64, bool) {
	if i >= len(job.Args) {
		return 0, false
	}
	n, ok := job.Args[i].(float64)
	return n, ok
}
