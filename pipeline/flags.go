package pipeline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// Flag defaults.
const (
	defaultName             = "beamthrottle"
	defaultMaxTotalAttempts = 5
)

// RegisterFlags defines the pipeline's flags on fs and returns the Options
// they fill when fs is parsed. Flag names use Beam's snake_case style and do
// not collide with Beam's own flags (--runner, --endpoint, --project, ...).
// Header values given with --header are never logged or written to outputs.
func RegisterFlags(fs *flag.FlagSet) *Options {
	o := &Options{CallerOptions: CallerOptions{Headers: map[string]string{}, HeaderEnv: map[string]string{}}}
	fs.StringVar(&o.Name, "name", defaultName, "Pipeline name, written to dead-letter attributes, and the default --quota_key: JOBS WITH THE SAME --name (beamthrottle unless set) SHARE ONE QUOTA on the same quota service.")

	fs.StringVar(&o.Input, "input", "", "Source: glob of text/JSONL files, one payload per non-empty line (bounded).")
	fs.StringVar(&o.InputFormat, "input_format", "text", "Payload check: text (payloads sent as they are) or jsonl (a payload that is not valid JSON goes to errors without a call).")
	fs.StringVar(&o.Subscription, "subscription", "", "Source: Pub/Sub subscription, ID or projects/P/subscriptions/S (unbounded unless --idle_timeout).")
	fs.IntVar(&o.Generate, "generate", 0, "Source: N synthetic JSON elements (bounded), for demos and benchmarks.")
	fs.Float64Var(&o.GenerateRate, "generate_rate", 0, "With --generate: emit the elements at this rate per second as a streaming source (0 = all at once, bounded).")
	fs.DurationVar(&o.IdleTimeout, "idle_timeout", 0, "With --subscription: stop when no message arrived for this long (drain mode). 0 = run until cancelled.")
	fs.StringVar(&o.Project, "pubsub_project", "", "Project of Pub/Sub topics and subscriptions given as IDs (default: --project, else beamthrottle-local).")
	fs.StringVar(&o.PubSubHost, "pubsub_emulator", "", "host:port of a Pub/Sub emulator (default: $PUBSUB_EMULATOR_HOST, else the real service).")

	fs.DurationVar(&o.PublishTimeout, "publish_timeout", 60*time.Second, "How long one Pub/Sub publish may take (retries included) before its bundle fails and is retried.")
	fs.StringVar(&o.Caller, "caller", "http", "Registered caller to use (built in: http, echo; see pipeline.RegisterCaller).")
	fs.StringVar(&o.CallerOptions.URL, "url", "", "URL the http caller sends each payload to.")
	fs.StringVar(&o.CallerOptions.Method, "method", "POST", "HTTP method of the http caller.")
	fs.StringVar(&o.CallerOptions.ContentType, "content_type", "application/json", "Content-Type of the http caller's requests.")
	fs.Func("header", "HTTP header 'Name: value' sent on every call (repeatable). The value is redacted from errors and outputs but is part of the job graph (shown by Beam's debug logs): use --header_env for secrets.", func(v string) error {
		name, value, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return errors.New("want 'Name: value'")
		}
		o.CallerOptions.Headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
		return nil
	})
	fs.Func("header_env", "HTTP header from an environment variable on the worker, 'Name=ENV_VAR' (repeatable; keeps secrets out of the job graph).", func(v string) error {
		name, env, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(env) == "" {
			return errors.New("want 'Name=ENV_VAR'")
		}
		o.CallerOptions.HeaderEnv[strings.TrimSpace(name)] = strings.TrimSpace(env)
		return nil
	})
	fs.Int64Var(&o.CallerOptions.MaxResponse, "max_response_bytes", 10<<20, "Largest response body the http caller accepts (0 means the default, 10 MiB); a larger 2xx body is an error.")
	fs.StringVar(&o.CallerOptions.ItemStatusField, "item_status_field", "", "Batched http calls: the member of each answer entry that holds its item's HTTP status (an entry whose status is >= 300 fails that item alone; 429 throttles it).")

	fs.IntVar(&o.Groups, "groups", defaults.Groups, "Number of throttle groups (parallelism; each has its own queue, and its own throttle state with --throttle_scope=group).")
	fs.IntVar(&o.BatchSize, "batch_size", defaults.BatchSize, "Max elements a group processes per batch interval.")
	fs.DurationVar(&o.BatchInterval, "batch_interval", defaults.BatchInterval, "How often a group with buffered elements processes a batch.")
	fs.StringVar(&o.Mode, "throttle_mode", string(throttle.ModePaced), "Throttle algorithm: paced (the default: spaces calls at the rate the backend accepts and postpones the rest) or sre (the original tool's SRE throttle: rejects at random, about K times the accepted rate gets through).")
	fs.StringVar(&o.Scope, "throttle_scope", "", "Which groups share one throttle: worker (all the groups on a worker pace together; the default with paced) or group (each group alone, its state in Beam state; the default with sre).")
	fs.Float64Var(&o.K, "k", 0, "SRE throttle multiplier K (> 0; 0 means 2): the client sends at most about K times what the backend accepts.")
	fs.StringVar(&o.Window, "window", "fixed", "Throttle counter window: fixed (reset every --reset_interval) or sliding (--window_size in --bucket buckets).")
	fs.DurationVar(&o.ResetInterval, "reset_interval", 0, "Fixed window: how often the counters are zeroed (0 means 1m).")
	fs.DurationVar(&o.WindowSize, "window_size", 0, "Sliding window: length of the window (0 means 2m).")
	fs.DurationVar(&o.Bucket, "bucket", 0, "Sliding window: bucket width (0 means 1s).")
	fs.StringVar(&o.Strategy, "strategy", "", "What to do with throttled elements: postpone (keep them queued until --max_wait; the default with --throttle_mode=paced), route (to the throttled outputs; the default with sre), drop, or retry.")
	fs.IntVar(&o.MaxAttempts, "max_attempts", defaults.MaxAttempts, "Retry strategy: max attempts per element in this run.")
	fs.DurationVar(&o.MaxAge, "max_age", defaults.MaxAge, "Retry strategy: max time since an element's first attempt.")
	fs.DurationVar(&o.CallTimeout, "call_timeout", defaults.CallTimeout, "Per-call timeout; a call past it goes to errors.")
	fs.IntVar(&o.CallsInFlight, "calls_in_flight", defaults.CallsInFlight,
		"Calls a group may have under way at once; 0 sizes it to the group's pace at the calls' latency, the worker's calls bound together by their latency's climb (up to 256; 1 if calls take 100 ms or less, or in the sre mode), 1 keeps calls one at a time.")
	fs.IntVar(&o.ItemsPerCall, "items_per_call", defaults.ItemsPerCall, "Elements per call (0 means 1): above 1, up to this many elements go in one call of the caller's batch form (the http caller: a JSON array of the payloads, answered by a JSON array).")
	fs.IntVar(&o.BytesPerCall, "bytes_per_call", 0, "Batched calls: most payload bytes in one call (0 = no bound; an element larger than it goes alone).")
	fs.StringVar(&o.Cost, "cost", "1", "What an element costs against the pacer and --quota_rate: 1 (each element one unit), bytes (its payload's size), call (one unit per call, for quotas counted in requests when calls are batched) or json:FIELD (the integer in the payload's top-level JSON field, e.g. json:tokens).")
	fs.StringVar(&o.QuotaBackend, "quota_backend", "none", "Quota for every group, worker and job: none, local (a known rate, --quota_rate, for this worker alone: calls sent on evenly spaced slots), redis (a GCRA in Redis or Memorystore at --quota_rate, shared: every worker sends on slots of one evenly spaced stream) or envoy (Envoy's rate-limit service, limits in its configuration for --quota_domain).")
	fs.StringVar(&o.QuotaAddr, "quota_address", "", "host:port of the quota's Redis or rate-limit service.")
	fs.StringVar(&o.QuotaKey, "quota_key", "", "Name of the shared quota: EVERY JOB WITH THE SAME KEY ON THE SAME SERVICE SHARES ONE QUOTA, on purpose or not (default: --name, itself beamthrottle unless set: give unrelated jobs their own). With redis, the key records its --quota_rate and --quota_burst, and a job with others on the same key is refused at start. For envoy, the value of the descriptor's last entry, key.")
	fs.StringVar(&o.QuotaRate, "quota_rate", "", "local, redis: the quota, as permits per period: 600/m, 10/s, 36000/h or 5/2s.")
	fs.IntVar(&o.QuotaBurst, "quota_burst", 0, "redis: 0 or 1 for time slots with no burst; above 1, a token bucket of that many permits, granted as counts (for APIs that allow bursts).")
	fs.Float64Var(&o.QuotaHighShare, "quota_high_share", 0, "local, redis (time slots): a share of --quota_rate kept for high-priority elements (--priority): while they are being sent, the normal and low tiers of every job on --quota_key take at most the rest; in [0, 1).")
	fs.Float64Var(&o.QuotaNormalShare, "quota_normal_share", 0, "local, redis (time slots): a share of --quota_rate kept for normal-priority elements and above: while they are being sent, the low tier takes at most the rest; in [0, 1).")
	fs.StringVar(&o.QuotaDomain, "quota_domain", "", "envoy: the domain of the limits in the rate-limit service's configuration.")
	fs.StringVar(&o.QuotaDescriptors, "quota_descriptors", "", "envoy: descriptor entries before the key entry, as k=v,k2=v2.")
	fs.StringVar(&o.QuotaFail, "quota_fail", "open", "When the quota's service does not answer within --quota_timeout: open (send, limited by the adaptive throttle alone; counted and logged) or closed (postpone until it answers).")
	fs.DurationVar(&o.QuotaTimeout, "quota_timeout", defaults.QuotaTimeout, "Longest wait for one round trip to the quota's service.")
	fs.StringVar(&o.Priority, "priority", "", "Where an element's priority tier comes from: json:FIELD (a top-level field of its JSON payload) or attr:NAME (a Pub/Sub attribute), holding high, normal or low (or a number: above 0 high, below 0 low); missing means normal. A group calls for high elements first, and what waits longest and is shed first is low. Empty: every element normal.")
	fs.StringVar(&o.Cache, "cache", "none", "Response cache, so that a repeated request costs no call and no quota: none, memory (an LRU on each worker) or redis (Redis or Memorystore at --cache_address, shared by every worker and job). Only successes are cached; a cache that fails is skipped (counted in cache_errors).")
	fs.StringVar(&o.CacheAddr, "cache_address", "", "host:port of the --cache=redis server.")
	fs.DurationVar(&o.CacheTTL, "cache_ttl", defaultCacheTTL, "How long a cached response is served (0: until evicted).")
	fs.StringVar(&o.CacheKey, "cache_key", "", "What identifies a request in the cache: empty for a hash of its payload, or json:FIELD for a top-level field of its JSON payload (e.g. json:id).")
	fs.IntVar(&o.MaxBuffered, "max_buffered", 0, "Max elements buffered per group; more are shed to client_throttled at once (0 = no bound).")
	fs.Var((*maxWaitFlag)(&o.MaxWait), "max_wait", "Postpone strategy: longest an element waits in its group's queue before it goes to client_throttled (or server_throttled after a 429): a duration, none or 0 (no bound; 0s too) or auto: for files and --generate, no bound while calls are accepted (every element is tried) but 10m once none has been, so a job against an API that refuses everything ends; 10m for --subscription and --generate_rate (bounds latency and backlog). An element that cannot be sent before its bound (a longer Retry-After) goes at once.")
	fs.IntVar(&o.MaxPayload, "max_payload_bytes", 0, "Payloads larger than this go to errors without a call (0 = no limit).")
	fs.BoolVar(&o.FailuresAsRejects, "failures_as_rejects", false, "Count non-overload failures (e.g. HTTP 400) as backend rejections in the throttle.")

	fs.StringVar(&o.OutputPrefix, "output_prefix", "", "Write each outcome as JSONL files <prefix><outcome>-<uuid>.jsonl (local path or gs://).")
	fs.StringVar(&o.SuccessTopic, "success_topic", "", "Pub/Sub topic for successful responses (optional).")
	fs.StringVar(&o.DeadLetterTopic, "dead_letter_topic", "", "Pub/Sub dead-letter topic: client- and server-throttled payloads with attributes.")
	fs.BoolVar(&o.DeadLetterErrors, "dead_letter_errors", false, "Also publish errors to the dead-letter topic.")

	fs.BoolVar(&o.Reprocess, "reprocess", false, "Reprocessing mode: read the dead-letter --subscription and send each payload through the throttle again.")
	fs.IntVar(&o.MaxTotalAttempts, "max_total_attempts", defaultMaxTotalAttempts, "Reprocessing: messages whose attempts reach this are parked instead of retried.")
	fs.StringVar(&o.ParkedTopic, "parked_topic", "", "Reprocessing: topic for parked messages (default: files <output_prefix>parked-*.jsonl).")
	return o
}

// Validate checks the options and names the flag at fault. The throttle
// settings are checked by the layer that owns them (transforms/throttle for
// the transform's, transforms/adaptive for the algorithm's), whose errors
// flagErrors maps to flag names; the checks here are the pipeline's own.
func (o Options) Validate() error {
	sources := 0
	for _, set := range []bool{o.Input != "", o.Subscription != "", o.Generate > 0} {
		if set {
			sources++
		}
	}
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	if o.Reprocess && o.Subscription == "" {
		bad("subscription", "--reprocess reads the dead-letter subscription: set --subscription")
	}
	if sources != 1 {
		bad("input", "exactly one source is needed: --input, --subscription or --generate (got %d)", sources)
	}
	if o.InputFormat != "" && o.InputFormat != "text" && o.InputFormat != "jsonl" {
		bad("input_format", "want text or jsonl, got %q", o.InputFormat)
	}
	if o.Generate < 0 {
		bad("generate", "must be >= 0, got %d", o.Generate)
	}
	if o.GenerateRate < 0 || math.IsInf(o.GenerateRate, 0) || math.IsNaN(o.GenerateRate) {
		bad("generate_rate", "must be a number >= 0, got %v", o.GenerateRate)
	}
	if o.IdleTimeout < 0 {
		bad("idle_timeout", "must be >= 0, got %v", o.IdleTimeout)
	}
	if (o.Caller == "" || o.Caller == "http") && o.CallerOptions.URL == "" {
		bad("url", "the http caller needs a URL")
	}
	if u := o.CallerOptions.URL; u != "" {
		// The URL's user info and query may hold credentials: the messages
		// do not quote it.
		pu, err := url.Parse(u)
		switch {
		case err != nil:
			if ue, ok := errors.AsType[*url.Error](err); ok {
				err = ue.Err // url.Error's text holds the whole URL
			}
			bad("url", "not a valid URL: %v", err)
		case pu.Scheme != "http" && pu.Scheme != "https":
			bad("url", "want an http:// or https:// URL, got scheme %q", pu.Scheme)
		case pu.Host == "":
			bad("url", "want an http:// or https:// URL with a host")
		}
	}
	if o.Caller == "" || o.Caller == "http" {
		errs = append(errs, o.CallerOptions.checkHTTP()...)
	}
	if o.Caller != "" {
		if _, ok := lookupCaller(o.Caller); !ok {
			bad("caller", "no caller registered as %q (registered: %v)", o.Caller, Callers())
		}
	}
	if _, err := o.throttleOptions(); err != nil {
		errs = append(errs, err)
	}
	if o.MaxPayload < 0 {
		bad("max_payload_bytes", "must be >= 0, got %d", o.MaxPayload)
	}
	if o.CallerOptions.MaxResponse < 0 {
		bad("max_response_bytes", "must be >= 0, got %d", o.CallerOptions.MaxResponse)
	}
	if o.PublishTimeout < 0 {
		bad("publish_timeout", "must be >= 0, got %v", o.PublishTimeout)
	}
	if o.MaxTotalAttempts < 1 {
		bad("max_total_attempts", "must be >= 1, got %d", o.MaxTotalAttempts)
	}
	if o.OutputPrefix == "" {
		bad("output_prefix", "required: errors (and payloads Pub/Sub refuses) are written under it")
	}
	return errors.Join(errs...)
}

// checkHTTP checks, flag by flag, what the http caller's Setup would refuse
// on every worker (a method or a header name that is not an HTTP token, a
// header value with control characters), by setting up a caller with that
// flag's value alone: clientcall holds the rule, this names the flag. It
// makes no request and reads no environment variable (Check does).
func (o CallerOptions) checkHTTP() []error {
	const url = "http://localhost/" // --url is checked on its own
	var errs []error
	try := func(flag string, h *clientcall.HTTP) {
		h.URL = url
		ctx := context.Background()
		if err := h.Setup(ctx); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %v", flag, err))
		}
		h.Teardown(ctx)
	}
	if o.Method != "" {
		try("method", &clientcall.HTTP{Method: o.Method})
	}
	if o.ContentType != "" {
		try("content_type", &clientcall.HTTP{Headers: map[string]string{"Content-Type": o.ContentType}})
	}
	if len(o.Headers) > 0 {
		try("header", &clientcall.HTTP{Headers: o.Headers})
	}
	if len(o.HeaderEnv) > 0 {
		names := map[string]string{}
		for name := range o.HeaderEnv {
			names[name] = "value"
		}
		try("header_env", &clientcall.HTTP{Headers: names})
	}
	return errs
}

// defaultCacheTTL is --cache_ttl's default.
const defaultCacheTTL = time.Hour

// throttleFlags names the flag of each throttle setting, as the throttle
// layer names it in its errors (throttle.OptionError: Option, or
// Option.Field for an option of several values).
var throttleFlags = map[string]string{
	"WithGroups": "groups", "WithBatchSize": "batch_size", "WithBatchInterval": "batch_interval",
	"WithStrategy": "strategy", "WithScope": "throttle_scope", "WithMaxAttempts": "max_attempts",
	"WithMaxAge": "max_age", "WithCallTimeout": "call_timeout", "WithCallsInFlight": "calls_in_flight",
	"WithMaxBuffered": "max_buffered", "WithMaxWait": "max_wait", "WithMaxStall": "max_wait", "WithItemsPerCall": "items_per_call",
	"WithBytesPerCall": "bytes_per_call", "WithMode": "throttle_mode", "WithCache": "cache_ttl",

	"WithQuota.Backend": "quota_backend", "WithQuota.Addr": "quota_address", "WithQuota.Key": "quota_key",
	"WithQuota.Rate": "quota_rate", "WithQuota.Burst": "quota_burst", "WithQuota.Domain": "quota_domain",
	"WithQuota.Descriptors": "quota_descriptors", "WithQuota.Timeout": "quota_timeout",
	"WithQuota.HighShare": "quota_high_share", "WithQuota.NormalShare": "quota_normal_share",
	"WithSRE.K": "k", "WithSRE.ResetInterval": "reset_interval", "WithSRE.WindowSize": "window_size", "WithSRE.Bucket": "bucket",
}

// flagErrors rewrites the errors of the throttle layer in err (joined with
// errors.Join or not) as "--flag: what is wrong"; other errors are kept as
// they are.
func flagErrors(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, flagErrors(e))
		}
		return errors.Join(errs...)
	}
	var oe *throttle.OptionError
	setting, reason := "", err
	switch {
	case errors.As(err, &oe) && oe.Field != "":
		setting, reason = oe.Option+"."+oe.Field, oe.Err
	case errors.As(err, &oe):
		setting, reason = oe.Option, oe.Err
	}
	if name, ok := throttleFlags[setting]; ok {
		return fmt.Errorf("--%s: %w", name, reason)
	}
	return err
}

// maxWaitFlag is --max_wait: "auto" (Options.MaxWait 0), "none" or a zero
// duration ("0", "0s": NoMaxWait) or a positive duration.
type maxWaitFlag time.Duration

func (m *maxWaitFlag) String() string {
	switch d := time.Duration(*m); {
	case d == 0:
		return "auto"
	case d < 0:
		return "none"
	default:
		return d.String()
	}
}

func (m *maxWaitFlag) Set(v string) error {
	switch v {
	case "auto":
		*m = 0
		return nil
	case "none":
		*m = maxWaitFlag(NoMaxWait)
		return nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil || d < 0:
		return errors.New("want a duration >= 0 (0: no bound), none or auto")
	case d == 0:
		*m = maxWaitFlag(NoMaxWait)
	default:
		*m = maxWaitFlag(d)
	}
	return nil
}
