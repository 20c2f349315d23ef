// Command quotaserver runs the beamthrottle quota test server: an HTTP API
// at /api that answers 429 with Retry-After once a quota is used up, with
// stats at /stats, Prometheus metrics at /metrics and admin endpoints to
// change the quota and inject faults at run time. See package testserver.
//
// Usage:
//
//	quotaserver [--addr 127.0.0.1:8500] [--quota 100] [--period 1s] [--mode token-bucket|fixed-window|gcra|queue]
//	            [--burst 0] [--window-jitter 0] [--refill 100ms] [--cost-header X-Cost] [--cost-field tokens]
//	            [--latency 0] [--latency-p99 0] [--jitter 0] [--refuse-at-once] [--error-rate 0] [--item-error-rate 0] [--max-body 1048576]
//	            [--max-conns 256] [--seed 0] [--log-level info] [--shutdown-timeout 10s]
//	            [--advertise ietf|draft|x-ratelimit|openai|anthropic] [--advertise-quota 0]
//
// With --cost-header or --cost-field, a request costs what its header or
// JSON field says and --quota counts cost units per period: --quota 60000
// --period 1m --cost-field tokens is a quota of 60000 tokens per minute.
// A JSON-array body is a batch, answered with one entry per item;
// --item-error-rate fails items one by one.
//
// It prints its URL, then serves until SIGINT or SIGTERM, when it waits up to
// --shutdown-timeout for requests in flight. Bad flags exit with status 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "quotaserver:", err)
	}
	os.Exit(exitCode(err))
}

// usageError is a bad command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitCode maps an error from run to a process exit status: 0 for none or
// -h, 2 for a bad command line, 1 otherwise.
func exitCode(err error) int {
	var u *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// run parses args, serves until ctx is done, then shuts down gracefully.
// It writes one line with the URL to stdout and logs to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quotaserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr            = fs.String("addr", "127.0.0.1:8500", "`host:port` to listen on (port 0 picks a free one)")
		quota           = fs.Int("quota", 100, "requests (or cost units, with --cost-header or --cost-field) allowed per period; 0 means unlimited")
		period          = fs.Duration("period", time.Second, "quota period")
		mode            = fs.String("mode", string(testserver.TokenBucket), "quota algorithm: token-bucket, fixed-window, gcra (strict: requests period/quota apart) or queue (never 429: requests wait their turn at quota per period)")
		burst           = fs.Int("burst", 0, "gcra only: requests (or cost units) that may come back to back after an idle period; 0 or 1 means no burst")
		windowJitter    = fs.Duration("window-jitter", 0, "fixed-window only: each window lasts the period plus a random extra in [0, window-jitter), the first starting at a random offset, so windows drift; 0 means windows of exactly the period from the start")
		refill          = fs.Duration("refill", 0, "token bucket refill step; 0 means 100ms or the period if shorter")
		latency         = fs.Duration("latency", 0, "delay added to every API request")
		jitter          = fs.Duration("jitter", 0, "extra uniformly random delay in [0, jitter)")
		refuseAtOnce    = fs.Bool("refuse-at-once", false, "answer a request over quota (429) at once, without --latency and --jitter, as a gateway in front of a slow backend does")
		latencyP99      = fs.Duration("latency-p99", 0, "with --latency as the median: each request's latency a lognormal draw with this 99th percentile (heavy-tailed)")
		costHeader      = fs.String("cost-header", "", "request `header` holding a request's cost, e.g. X-Cost; then --quota counts cost units")
		costField       = fs.String("cost-field", "", "top-level JSON `field` holding the cost of a request or of each batch item (summed), e.g. tokens; then --quota counts cost units")
		advertise       = fs.String("advertise", "", "header family in which every answer tells the quota (limit, remaining, reset): ietf (RateLimit-Policy, RateLimit), draft (RateLimit-Limit/-Remaining/-Reset), x-ratelimit (GitHub's, reset in epoch seconds), openai or anthropic; empty means none")
		advertiseQuota  = fs.Int("advertise-quota", 0, "with --advertise: the quota per period the headers tell instead of --quota (what remains counted against it), as an API whose headers tell a plan's limit while its gateway enforces another; 0 means --quota")
		errorRate       = fs.Float64("error-rate", 0, "fraction in [0, 1] of under-quota requests answered 500")
		itemErrorRate   = fs.Float64("item-error-rate", 0, "probability in [0, 1] that each item of a JSON-array batch answered 200 fails, answered {\"status\":500,...} in its place")
		maxBody         = fs.Int64("max-body", testserver.DefaultMaxBodyBytes, "largest API request body in bytes; larger ones get 413")
		maxConns        = fs.Int("max-conns", testserver.DefaultMaxConns, "concurrent connections; more wait to be accepted")
		seed            = fs.Uint64("seed", 0, "seed for jitter, injected errors and drifting windows")
		logLevel        = fs.String("log-level", "info", "log level: debug (one line per request), info, warn or error")
		shutdownTimeout = fs.Duration("shutdown-timeout", 10*time.Second, "how long to wait for requests in flight on SIGINT or SIGTERM")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err.Error()}
	}

	var level slog.Level
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	case *quota < 0:
		return usagef("--quota: %d is negative", *quota)
	case *period <= 0:
		return usagef("--period: %v is not positive", *period)
	case *mode != string(testserver.TokenBucket) && *mode != string(testserver.FixedWindow) && *mode != string(testserver.GCRA) &&
		*mode != string(testserver.Queue):
		return usagef("--mode: %q: want %s, %s, %s or %s", *mode, testserver.TokenBucket, testserver.FixedWindow, testserver.GCRA, testserver.Queue)
	case *burst < 0:
		return usagef("--burst: %d is negative", *burst)
	case *burst != 0 && *mode != string(testserver.GCRA):
		return usagef("--burst: only with --mode %s (the %s's burst is --quota)", testserver.GCRA, *mode)
	case *windowJitter < 0:
		return usagef("--window-jitter: %v is negative", *windowJitter)
	case *windowJitter != 0 && *mode != string(testserver.FixedWindow):
		return usagef("--window-jitter: only with --mode %s", testserver.FixedWindow)
	case *refill < 0:
		return usagef("--refill: %v is negative", *refill)
	case *latency < 0:
		return usagef("--latency: %v is negative", *latency)
	case *jitter < 0:
		return usagef("--jitter: %v is negative", *jitter)
	case *latencyP99 != 0 && (*latency <= 0 || *latencyP99 <= *latency):
		return usagef("--latency-p99: %v must be above a positive --latency (the median), got %v", *latencyP99, *latency)
	case !slices.Contains([]testserver.Advertise{testserver.AdvertiseNone, testserver.AdvertiseIETF, testserver.AdvertiseDraft,
		testserver.AdvertiseX, testserver.AdvertiseOpenAI, testserver.AdvertiseAnthropic}, testserver.Advertise(*advertise)):
		return usagef("--advertise: %q: want ietf, draft, x-ratelimit, openai or anthropic", *advertise)
	case *advertiseQuota < 0:
		return usagef("--advertise-quota: %d is negative", *advertiseQuota)
	case *advertiseQuota != 0 && *advertise == "":
		return usagef("--advertise-quota: only with --advertise")
	case !(*errorRate >= 0 && *errorRate <= 1):
		return usagef("--error-rate: %v is not in [0, 1]", *errorRate)
	case !(*itemErrorRate >= 0 && *itemErrorRate <= 1):
		return usagef("--item-error-rate: %v is not in [0, 1]", *itemErrorRate)
	case *costHeader != "" && !httpguts.ValidHeaderFieldName(*costHeader):
		return usagef("--cost-header: %q is not a valid header name", *costHeader)
	case *maxBody <= 0:
		return usagef("--max-body: %d is not positive", *maxBody)
	case *maxConns <= 0:
		return usagef("--max-conns: %d is not positive", *maxConns)
	case *shutdownTimeout <= 0:
		return usagef("--shutdown-timeout: %v is not positive", *shutdownTimeout)
	case level.UnmarshalText([]byte(*logLevel)) != nil:
		return usagef("--log-level: %q: want debug, info, warn or error", *logLevel)
	}

	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv, err := testserver.Listen(*addr, testserver.Config{
		Quota:          *quota,
		Period:         *period,
		Mode:           testserver.Mode(*mode),
		Burst:          *burst,
		WindowJitter:   *windowJitter,
		Refill:         *refill,
		Latency:        *latency,
		LatencyP99:     *latencyP99,
		Jitter:         *jitter,
		RefuseAtOnce:   *refuseAtOnce,
		Advertise:      testserver.Advertise(*advertise),
		AdvertiseQuota: *advertiseQuota,
		ErrorRate:      *errorRate,
		ItemErrorRate:  *itemErrorRate,
		CostHeader:     *costHeader,
		CostField:      *costField,
		MaxBodyBytes:   *maxBody,
		MaxConns:       *maxConns,
		Seed:           *seed,
		Logger:         logger,
	})
	if errors.Is(err, testserver.ErrConfig) {
		return &usageError{err.Error()} // e.g. a quota too large for its period
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "quotaserver listening on %s (API %s)\n", srv.URL, srv.Endpoint())

	<-ctx.Done()
	logger.Info("shutting down", "timeout", *shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}
