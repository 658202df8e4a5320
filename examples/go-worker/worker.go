package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"ojs.example/ojspb"
)

const (
	running   = ojspb.WorkerState_WORKER_STATE_RUNNING
	quiet     = ojspb.WorkerState_WORKER_STATE_QUIET
	terminate = ojspb.WorkerState_WORKER_STATE_TERMINATE

	rpcTimeout = 10 * time.Second // for every unary call
	retryDelay = time.Second      // before reopening a failed stream or registering again
)

var stateNames = map[ojspb.WorkerState]string{running: "running", quiet: "quiet", terminate: "terminate"}

func stateName(state ojspb.WorkerState) string {
	if name, ok := stateNames[state]; ok {
		return name
	}
	return "unspecified"
}

// canMove is the lifecycle of worker-protocol.md 2.3: never backward from terminate.
func canMove(from, to ojspb.WorkerState) bool {
	switch from {
	case running:
		return to == quiet || to == terminate
	case quiet:
		return to == running || to == terminate
	}
	return false
}

// Why the worker stopped a job's handler.
type stopReason string

const (
	notStopped    stopReason = ""
	stopCancelled stopReason = "cancelled" // the server cancelled the job
	stopTimeout   stopReason = "timeout"   // its execution timeout passed
	stopShutdown  stopReason = "shutdown"  // the grace period of a shutdown ended
	stopLost      stopReason = "lost"      // the server took the job back (or forgot this worker)
)

type heldJob struct {
	delivery *ojspb.Delivery
	cancel   context.CancelFunc // stops the handler
	done     chan struct{}      // closed once the job is released
	stop     stopReason         // guarded by Worker.mu
	settling bool               // an Ack or Fail is on its way; guarded by Worker.mu
}

// Worker speaks the OJS worker protocol: Register, a Beat stream, a Fetch
// stream while running, Ack/Fail per job, and a graceful shutdown.
type Worker struct {
	cfg       Config
	client    ojspb.WorkerServiceClient
	startedAt time.Time

	mu       sync.Mutex
	state    ojspb.WorkerState
	held     map[string]*heldJob
	interval time.Duration
	sequence uint64
	// A state the worker chose itself (signal) is unknown to the server until
	// a beat reporting it is answered; replies before that still carry the
	// old state and must not move the worker back. reportSeq is the beat that
	// carries it (0: not sent yet).
	reportPending bool
	reportSeq     uint64
	changed       chan struct{} // closed and replaced on every state change
	settled       chan struct{} // closed and replaced whenever a job is released

	beatNow     chan struct{} // capacity 1: send a beat at once
	terminating chan struct{} // closed on entering terminate
	forced      chan struct{} // closed by a second shutdown signal
	forceOnce   sync.Once
}

func NewWorker(cfg Config, client ojspb.WorkerServiceClient) *Worker {
	return &Worker{
		cfg:         cfg,
		client:      client,
		startedAt:   time.Now(),
		state:       running,
		held:        map[string]*heldJob{},
		interval:    5 * time.Second,
		changed:     make(chan struct{}),
		settled:     make(chan struct{}),
		beatNow:     make(chan struct{}, 1),
		terminating: make(chan struct{}),
		forced:      make(chan struct{}),
	}
}

// Run works until a shutdown (signal or terminate directive) has completed.
func (w *Worker) Run() error {
	if registered, err := w.register(); !registered {
		return err
	}
	beatCtx, stopBeat := context.WithCancel(context.Background())
	fetchCtx, stopFetch := context.WithCancel(context.Background())
	beatDone, fetchDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(beatDone); w.beatLoop(beatCtx) }()
	go func() { defer close(fetchDone); w.fetchLoop(fetchCtx) }()

	<-w.terminating
	w.drain()
	stopFetch()
	<-fetchDone
	w.failLeftovers()
	stopBeat()
	<-beatDone
	w.deregister()
	return nil
}

// register registers, retrying while the server is unreachable; false if a
// shutdown came first.
func (w *Worker) register() (bool, error) {
	request := &ojspb.RegisterRequest{
		WorkerId:    w.cfg.WorkerID,
		Hostname:    hostname(),
		Pid:         int32(os.Getpid()),
		Queues:      w.cfg.Queues,
		Concurrency: int32(w.cfg.Concurrency),
		Labels:      w.cfg.Labels,
		StartedAt:   timestamppb.New(w.startedAt),
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		reply, err := w.client.Register(ctx, request)
		cancel()
		if err == nil {
			w.mu.Lock()
			if interval := reply.GetHeartbeatInterval().AsDuration(); interval > 0 {
				w.interval = interval
			}
			w.mu.Unlock()
			logEvent("registered", "worker_id", w.cfg.WorkerID, "queues", w.cfg.Queues, "concurrency", w.cfg.Concurrency,
				"heartbeat_interval_ms", w.interval.Milliseconds())
			return true, nil
		}
		if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
			return false, err
		}
		logEvent("register_retry", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		select {
		case <-w.terminating:
			return false, nil
		case <-time.After(retryDelay):
		}
	}
}

// moveTo moves to a state if the lifecycle allows it; cause is "directive" or "signal".
func (w *Worker) moveTo(state ojspb.WorkerState, cause string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.moveToLocked(state, cause)
}

func (w *Worker) moveToLocked(state ojspb.WorkerState, cause string) {
	if state == w.state || !canMove(w.state, state) {
		return
	}
	logEvent("state", "state", stateNames[state], "previous", stateNames[w.state], "cause", cause)
	w.state = state
	if cause != "directive" {
		w.reportPending, w.reportSeq = true, 0
	}
	close(w.changed)
	w.changed = make(chan struct{})
	if state == terminate {
		close(w.terminating)
	}
	// Report at once: leaving running makes the server end the Fetch stream.
	w.wakeBeat()
}

func (w *Worker) onShutdownSignal(name string) {
	logEvent("signal", "signal", name)
	w.mu.Lock()
	again := w.state == terminate
	w.moveToLocked(terminate, "signal")
	w.mu.Unlock()
	if again { // a second signal: stop waiting for held jobs
		w.forceOnce.Do(func() { close(w.forced) })
	}
}

// drain waits for held jobs to finish, up to the grace period (or a second signal).
func (w *Worker) drain() {
	grace := time.NewTimer(w.cfg.GracePeriod)
	defer grace.Stop()
	w.mu.Lock()
	logEvent("draining", "active_jobs", len(w.held), "grace_period_ms", w.cfg.GracePeriod.Milliseconds())
	w.mu.Unlock()
	for {
		w.mu.Lock()
		held, settled := len(w.held), w.settled
		w.mu.Unlock()
		if held == 0 {
			return
		}
		select {
		case <-settled:
		case <-grace.C:
			return
		case <-w.forced:
			return
		}
	}
}

// failLeftovers fails the jobs still running after the drain with error type
// "shutdown" (retryable), then waits for Acks and Fails already on their way.
func (w *Worker) failLeftovers() {
	var leftovers, settling []*heldJob
	w.mu.Lock()
	for _, h := range w.held {
		switch {
		case h.settling:
			settling = append(settling, h)
		case h.stop == notStopped || h.stop == stopTimeout: // still held by this worker
			h.stop, h.settling = stopShutdown, true
			leftovers = append(leftovers, h)
		}
	}
	w.mu.Unlock()

	if len(leftovers) > 0 {
		message := fmt.Sprintf("the worker shut down before the job finished (grace period %s)", w.cfg.GracePeriod)
		request := &ojspb.FailBatchRequest{WorkerId: w.cfg.WorkerID}
		for _, h := range leftovers {
			request.Failures = append(request.Failures, &ojspb.Failure{
				JobId: h.delivery.Job.Id, LeaseToken: h.delivery.LeaseToken,
				Error: &ojspb.JobError{Type: "shutdown", Message: message},
			})
		}
		ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		reply, err := w.client.FailBatch(ctx, request)
		cancel()
		if err != nil {
			// Deregister (or, failing that, the server's timeouts) releases them.
			logEvent("settle_error", "call", "FailBatch", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		} else {
			for _, result := range reply.Results {
				if result.Ok {
					logEvent("failed", "job_id", result.JobId, "error_type", "shutdown", "state", jobStateName(result.State))
				} else {
					logEvent("settle_refused", "job_id", result.JobId, "call", "FailBatch", "code", result.ErrorCode, "message", result.ErrorMessage)
				}
			}
		}
		for _, h := range leftovers {
			h.cancel()
		}
	}
	deadline := time.After(rpcTimeout)
	for _, h := range settling {
		select {
		case <-h.done:
		case <-deadline:
			return
		}
	}
}

func (w *Worker) deregister() {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	reply, err := w.client.Deregister(ctx, &ojspb.DeregisterRequest{WorkerId: w.cfg.WorkerID})
	if err != nil {
		logEvent("deregister_error", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		return
	}
	logEvent("deregistered", "released_job_ids", nonNil(reply.ReleasedJobIds))
}

// --- Beat -------------------------------------------------------------------

func (w *Worker) beatLoop(ctx context.Context) {
	for {
		err := w.beatStream(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			logEvent("beat_error", "code", "OK", "message", "the server ended the Beat stream")
		} else {
			logEvent("beat_error", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		}
		if status.Code(err) == codes.NotFound && !w.isTerminating() {
			w.registerAgain()
			continue
		}
		if !sleep(ctx, retryDelay) {
			return
		}
	}
}

// beatStream sends a beat every heartbeat interval, and at once when beatNow
// fires, until the stream or ctx ends; nil means the server ended it.
func (w *Worker) beatStream(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := w.client.Beat(ctx)
	if err != nil {
		return err
	}
	w.mu.Lock()
	if w.reportPending {
		w.reportSeq = 0 // a beat lost with the old stream: report again
	}
	w.mu.Unlock()
	received := make(chan error, 1)
	go func() {
		for {
			reply, err := stream.Recv()
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				received <- err
				return
			}
			w.onBeatReply(reply)
		}
	}()
	for {
		if err := stream.Send(w.nextBeat()); err != nil {
			return <-received // Send fails with io.EOF; the status comes from Recv
		}
		w.mu.Lock()
		timer := time.NewTimer(w.interval)
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case err := <-received:
			timer.Stop()
			return err
		case <-w.beatNow:
			timer.Stop()
		case <-timer.C:
		}
	}
}

func (w *Worker) nextBeat() *ojspb.BeatRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sequence++
	if w.reportPending && w.reportSeq == 0 {
		w.reportSeq = w.sequence
	}
	// Every held job, or the server takes it back; not those it already took.
	ids := []string{}
	for id, h := range w.held {
		if h.stop == notStopped || h.stop == stopTimeout {
			ids = append(ids, id)
		}
	}
	return &ojspb.BeatRequest{WorkerId: w.cfg.WorkerID, State: w.state, ActiveJobs: int32(len(ids)), ActiveJobIds: ids, Sequence: w.sequence}
}

func (w *Worker) onBeatReply(reply *ojspb.BeatResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reportPending && w.reportSeq != 0 && reply.InReplyTo >= w.reportSeq {
		w.reportPending = false
	}
	if !w.reportPending && reply.State != ojspb.WorkerState_WORKER_STATE_UNSPECIFIED {
		w.moveToLocked(reply.State, "directive")
	}
	for _, id := range reply.CancelledJobIds {
		w.stopLocked(id, stopCancelled)
	}
	for _, id := range reply.TimedOutJobIds {
		w.stopLocked(id, stopTimeout)
	}
	// Taken back by the server (it runs again elsewhere): stop, answer nothing.
	for _, id := range reply.ReclaimedJobIds {
		w.stopLocked(id, stopLost)
	}
	if w.cfg.Verbose && reply.InReplyTo != 0 {
		logEvent("beat", "sequence", reply.InReplyTo, "state", stateNames[w.state], "server_state", stateName(reply.State), "active_jobs", len(w.held))
	}
}

// registerAgain: the server forgot this worker (declared it dead) and already took its jobs back.
func (w *Worker) registerAgain() {
	w.mu.Lock()
	for id := range w.held {
		w.stopLocked(id, stopLost)
	}
	w.mu.Unlock()
	if _, err := w.register(); err != nil {
		logEvent("register_error", "code", status.Code(err).String(), "message", status.Convert(err).Message())
	}
}

func (w *Worker) isTerminating() bool {
	select {
	case <-w.terminating:
		return true
	default:
		return false
	}
}

func (w *Worker) wakeBeat() {
	select {
	case w.beatNow <- struct{}{}:
	default:
	}
}

// --- Fetch ------------------------------------------------------------------

func (w *Worker) fetchLoop(ctx context.Context) {
	for w.waitRunning(ctx) {
		err := w.fetchStream(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			// The server ends the stream when the worker leaves running (or
			// is deregistered): waitRunning reopens it only while running.
			w.mu.Lock()
			logEvent("fetch_ended", "state", stateNames[w.state])
			w.mu.Unlock()
			continue
		}
		// FAILED_PRECONDITION: the server already sees this worker as quiet
		// or terminating; the Beat stream will say so too.
		logEvent("fetch_error", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		if !sleep(ctx, retryDelay) {
			return
		}
	}
}

func (w *Worker) fetchStream(ctx context.Context) error {
	stream, err := w.client.Fetch(ctx, &ojspb.FetchRequest{WorkerId: w.cfg.WorkerID})
	if err != nil {
		return err
	}
	for {
		message, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for _, delivery := range message.Deliveries { // none in a keepalive
			w.start(delivery)
		}
	}
}

func (w *Worker) waitRunning(ctx context.Context) bool {
	for {
		w.mu.Lock()
		isRunning, changed := w.state == running, w.changed
		w.mu.Unlock()
		if isRunning {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// --- Jobs -------------------------------------------------------------------

func (w *Worker) start(delivery *ojspb.Delivery) {
	job := toJob(delivery.Job)
	ctx, cancel := context.WithCancel(context.Background())
	h := &heldJob{delivery: delivery, cancel: cancel, done: make(chan struct{})}
	w.mu.Lock()
	running := w.runningHandlersLocked() + 1
	if running > w.cfg.Concurrency {
		logEvent("over_capacity", "job_id", job.ID, "running", running) // the server never sends more than that
	}
	w.held[job.ID] = h
	logEvent("started", "job_id", job.ID, "type", job.Type, "queue", job.Queue, "attempt", job.Attempt, "running", running)
	w.mu.Unlock()
	go w.process(ctx, h, job)
}

// runningHandlersLocked counts handlers still working on a job the server
// counts against this worker's concurrency.
func (w *Worker) runningHandlersLocked() int {
	n := 0
	for _, h := range w.held {
		if !h.settling && (h.stop == notStopped || h.stop == stopTimeout) {
			n++
		}
	}
	return n
}

func (w *Worker) stopLocked(jobID string, reason stopReason) {
	h, ok := w.held[jobID]
	if !ok || h.stop != notStopped || h.settling {
		return
	}
	h.stop = reason
	logEvent("stopping", "job_id", jobID, "reason", string(reason))
	h.cancel()
}

// process runs the handler, then settles the job as its outcome and stop reason say.
func (w *Worker) process(ctx context.Context, h *heldJob, job *Job) {
	defer w.release(h)
	result, err := invoke(ctx, job)

	w.mu.Lock()
	reason := h.stop
	if reason == notStopped || reason == stopTimeout {
		h.settling = true
	}
	w.mu.Unlock()
	switch reason {
	case stopCancelled, stopLost:
		logEvent(string(reason), "job_id", job.ID) // the server refuses any answer now
		return
	case stopShutdown:
		return // failed by failLeftovers
	case stopTimeout:
		if err != nil {
			err = &JobError{Type: "timeout", Message: "stopped: the job's execution timeout passed"}
		}
	}
	if err != nil {
		w.fail(h, toProtoError(err))
		return
	}
	value, err := structpb.NewValue(result)
	if err != nil {
		w.fail(h, &ojspb.JobError{Type: "invalid_result", Message: err.Error()})
		return
	}
	w.ack(h, value)
}

func (w *Worker) release(h *heldJob) {
	h.cancel()
	w.mu.Lock()
	delete(w.held, h.delivery.Job.Id)
	close(w.settled)
	w.settled = make(chan struct{})
	w.mu.Unlock()
	close(h.done)
}

func (w *Worker) ack(h *heldJob, result *structpb.Value) {
	job := h.delivery.Job
	request := &ojspb.AckRequest{WorkerId: w.cfg.WorkerID, JobId: job.Id, LeaseToken: h.delivery.LeaseToken, Result: result}
	err := withRetries(func(ctx context.Context) error {
		_, err := w.client.Ack(ctx, request)
		return err
	})
	if err != nil {
		logEvent("settle_refused", "job_id", job.Id, "call", "Ack", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		return
	}
	logEvent("acked", "job_id", job.Id, "type", job.Type, "attempt", job.Attempt)
}

func (w *Worker) fail(h *heldJob, jobError *ojspb.JobError) {
	job := h.delivery.Job
	request := &ojspb.FailRequest{WorkerId: w.cfg.WorkerID, JobId: job.Id, LeaseToken: h.delivery.LeaseToken, Error: jobError}
	var reply *ojspb.FailResponse
	err := withRetries(func(ctx context.Context) (err error) {
		reply, err = w.client.Fail(ctx, request)
		return err
	})
	if err != nil {
		// FAILED_PRECONDITION: the lease is gone (cancelled, reclaimed).
		logEvent("settle_refused", "job_id", job.Id, "call", "Fail", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		return
	}
	logEvent("failed", "job_id", job.Id, "type", job.Type, "attempt", job.Attempt, "error_type", jobError.Type, "state", jobStateName(reply.State))
}

// withRetries makes a unary call, retrying a few times while the server is unavailable.
func withRetries(call func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		err := call(ctx)
		cancel()
		if err == nil || status.Code(err) != codes.Unavailable || attempt == 3 {
			return err
		}
		time.Sleep(200 * time.Millisecond << attempt)
	}
}

// invoke runs the job's handler; a panic fails the attempt instead of the process.
func invoke(ctx context.Context, job *Job) (result any, err error) {
	handler, ok := handlers[job.Type]
	if !ok {
		return nil, &JobError{Type: "unknown_job_type", Message: fmt.Sprintf("this worker has no handler for %q", job.Type), Code: ojspb.HandlerCode_HANDLER_CODE_FAIL}
	}
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: string(debug.Stack())}
		}
	}()
	return handler(ctx, job)
}

type panicError struct {
	value any
	stack string
}

func (e *panicError) Error() string { return fmt.Sprint(e.value) }

func toProtoError(err error) *ojspb.JobError {
	var jobError *JobError
	var panicked *panicError
	switch {
	case errors.As(err, &jobError):
		result := &ojspb.JobError{Type: jobError.Type, Message: jobError.Message, Code: jobError.Code}
		if len(jobError.Details) > 0 {
			if details, err := structpb.NewStruct(jobError.Details); err == nil {
				result.Details = details
			}
		}
		return result
	case errors.As(err, &panicked):
		// debug.Stack lists frames innermost first as "function\n\tfile:line".
		var frames []string
		lines := strings.Split(strings.TrimSpace(panicked.stack), "\n")
		for i := 1; i+1 < len(lines); i += 2 {
			frames = append(frames, strings.TrimSpace(lines[i])+" "+strings.TrimSpace(lines[i+1]))
		}
		return &ojspb.JobError{Type: "panic", Message: panicked.Error(), Backtrace: frames}
	default:
		return &ojspb.JobError{Type: "handler_error", Message: err.Error()}
	}
}

func toJob(job *ojspb.Job) *Job {
	args := make([]any, len(job.Args))
	for i, arg := range job.Args {
		args[i] = arg.AsInterface()
	}
	return &Job{ID: job.Id, Type: job.Type, Queue: job.Queue, Args: args, Attempt: job.Attempt, Meta: job.Meta.AsMap()}
}

func jobStateName(state ojspb.JobState) string {
	return strings.ToLower(strings.TrimPrefix(state.String(), "JOB_STATE_"))
}

func hostname() string {
	name, _ := os.Hostname()
	return name
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// sleep waits d unless ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
