// Command ojs-go-worker is an OJS worker in Go: grpc-go on stubs generated
// from proto/.
//
// It registers, keeps the Beat stream (listing every held job, obeying the
// quiet and terminate directives and the cancellations the server pushes),
// consumes the Fetch stream, settles each job with Ack or Fail, and on
// SIGTERM or SIGINT drains within a grace period, fails what is left with
// error type "shutdown", deregisters and exits 0 (a second signal cuts the
// drain short). SIGTSTP quiets it, SIGCONT resumes it.
//
// Every event is one JSON object per line on stdout, e.g.
// {"event":"acked","job_id":"...",...}. TLS, mTLS and a bearer token come
// from OJS_TLS_CA, OJS_TLS_CERT, OJS_TLS_KEY and OJS_TOKEN (channel.go).
// See README.md for building it.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"ojs.example/ojspb"
)

// Config comes from flags, which default to the OJS_* environment variables.
type Config struct {
	Server      string
	Queues      []string
	Concurrency int
	GracePeriod time.Duration
	Labels      []string
	WorkerID    string
	Verbose     bool
}

func loadConfig(args []string) (Config, error) {
	flags := flag.NewFlagSet("ojs-go-worker", flag.ContinueOnError)
	server := flags.String("server", env("OJS_SERVER", "127.0.0.1:9090"), "host:port of the OJS server")
	queues := flags.String("queues", env("OJS_QUEUES", "default"), "comma-separated queues, highest priority first")
	concurrency := flags.String("concurrency", env("OJS_CONCURRENCY", "10"), "most jobs held at once")
	grace := flags.String("grace-period", env("OJS_SHUTDOWN_GRACE_PERIOD", "25s"), "how long a shutdown waits for held jobs")
	labels := flags.String("labels", env("OJS_LABELS", ""), "comma-separated labels")
	workerID := flags.String("worker-id", env("OJS_WORKER_ID", "go-"+uuid7()), "unique per process")
	verbose := flags.Bool("verbose", os.Getenv("OJS_VERBOSE") == "1" || os.Getenv("OJS_VERBOSE") == "true", "log every beat")
	if err := flags.Parse(args); err != nil {
		return Config{}, err
	}
	n, err := strconv.Atoi(*concurrency)
	if err != nil || n < 1 {
		return Config{}, fmt.Errorf("concurrency must be a whole number of at least 1, not %q", *concurrency)
	}
	gracePeriod, err := parseDuration(*grace)
	if err != nil {
		return Config{}, fmt.Errorf("grace period: %w", err)
	}
	return Config{
		Server: *server, Queues: split(*queues), Concurrency: n, GracePeriod: gracePeriod,
		Labels: split(*labels), WorkerID: *workerID, Verbose: *verbose,
	}, nil
}

// parseDuration reads "25s", "500ms", "2m", "1h" or a bare number of seconds (the server's format).
func parseDuration(text string) (time.Duration, error) {
	if seconds, err := strconv.ParseFloat(text, 64); err == nil {
		return time.Duration(seconds * float64(time.Second)), nil
	}
	return time.ParseDuration(text)
}

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

func split(list string) []string {
	parts := []string{}
	for _, part := range strings.Split(list, ",") {
		if part = strings.TrimSpace(part); part != "" {
			parts = append(parts, part)
		}
	}
	return parts
}

// uuid7 is a UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version, variant, random bits.
func uuid7() string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(time.Now().UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

var logMu sync.Mutex

// logEvent writes {"event":event,"ts":...,key:value...} as one line on stdout.
func logEvent(event string, keyValues ...any) {
	var line bytes.Buffer
	write := func(v any) {
		encoded, err := json.Marshal(v)
		if err != nil {
			encoded, _ = json.Marshal(fmt.Sprint(v))
		}
		line.Write(encoded)
	}
	line.WriteString(`{"event":`)
	write(event)
	fmt.Fprintf(&line, `,"ts":%.3f`, float64(time.Now().UnixMilli())/1000)
	for i := 0; i+1 < len(keyValues); i += 2 {
		line.WriteByte(',')
		write(fmt.Sprint(keyValues[i]))
		line.WriteByte(':')
		write(keyValues[i+1])
	}
	line.WriteString("}\n")
	logMu.Lock()
	defer logMu.Unlock()
	_, _ = os.Stdout.Write(line.Bytes())
}

func main() {
	cfg, err := loadConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	transport, err := transportOptions()
	if err != nil {
		logEvent("fatal", "code", "INVALID_SETTING", "message", err.Error())
		os.Exit(2)
	}
	conn, err := grpc.Dial(cfg.Server, transport...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	worker := NewWorker(cfg, ojspb.NewWorkerServiceClient(conn))

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGTSTP, syscall.SIGCONT)
	go func() {
		for sig := range signals {
			switch sig {
			case syscall.SIGTERM:
				worker.onShutdownSignal("SIGTERM")
			case syscall.SIGINT:
				worker.onShutdownSignal("SIGINT")
			case syscall.SIGTSTP:
				worker.moveTo(quiet, "signal")
			case syscall.SIGCONT:
				worker.moveTo(running, "signal")
			}
		}
	}()

	err = worker.Run()
	conn.Close()
	if err != nil { // e.g. Register refused: ALREADY_EXISTS, INVALID_ARGUMENT, UNAUTHENTICATED (a wrong token)
		logEvent("fatal", "code", status.Code(err).String(), "message", status.Convert(err).Message())
		os.Exit(1)
	}
	logEvent("exited")
}
