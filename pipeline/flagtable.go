package pipeline

import (
	"cmp"
	"errors"
	"flag"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
	"github.com/beamthrottle/beamthrottle/internal/flaghelp"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// A flagSpec is one flag of the pipeline, one row of flagTable: everything
// about the flag is said here and derived from here. RegisterFlags defines
// it, --help shows it in its group (flaghelp.Pipeline), throttleOptions
// passes its transform options on, and flagErrors names it in the throttle
// layer's errors about its settings. The templates' parameters are checked
// against the flags RegisterFlags defines.
type flagSpec struct {
	name  string // without dashes, in Beam's snake_case
	group string // the title of its group in --help
	// define defines the flag on fs, bound to its field of Options with
	// its default.
	define func(fs *flag.FlagSet, name, usage string)
	// setting is the throttle setting the flag sets alone, as
	// throttle.OptionError names it (Option, or Option.Field for an option
	// of several values); several are separated by spaces. Empty for a
	// flag the throttle layer does not check.
	setting string
	// option is what the flag passes to the transform when it sets whole
	// options alone, built from the Options flagTable was given. The
	// options several flags make together (WithSRE, WithQuota, WithCache,
	// the cost and the priority) are built by throttleOptions.
	option []throttle.Option
	usage  string
}

// The groups of --help, in the order it shows them.
const (
	groupSource    = "Source (exactly one of --input, --subscription, --generate)"
	groupCaller    = "Caller"
	groupThrottle  = "Throttle"
	groupCache     = "Response cache"
	groupQuota     = "Shared quota"
	groupOutputs   = "Outputs"
	groupPubSub    = "Pub/Sub"
	groupReprocess = "Reprocessing"
)

// flagTable returns the pipeline's flags bound to o, in the order --help
// shows them, group by group. A setting added to the transform needs a
// field in Options and a row here.
func flagTable(o *Options) []flagSpec {
	return []flagSpec{
		{name: "input", group: groupSource, define: bind(&o.Input, ""),
			usage: "Source: glob of text/JSONL files, one payload per non-empty line (bounded)."},
		{name: "input_format", group: groupSource, define: bind(&o.InputFormat, "text"),
			usage: "Payload check: text (payloads sent as they are) or jsonl (a payload that is not valid JSON goes to errors without a call)."},
		{name: "subscription", group: groupSource, define: bind(&o.Subscription, ""),
			usage: "Source: Pub/Sub subscription, ID or projects/P/subscriptions/S (unbounded unless --idle_timeout)."},
		{name: "idle_timeout", group: groupSource, define: bind(&o.IdleTimeout, 0),
			usage: "With --subscription: stop when no message arrived for this long (drain mode). 0 = run until cancelled."},
		{name: "generate", group: groupSource, define: bind(&o.Generate, 0),
			usage: "Source: N synthetic JSON elements (bounded), for demos and benchmarks."},
		{name: "generate_rate", group: groupSource, define: bind(&o.GenerateRate, 0),
			usage: "With --generate: emit the elements at this rate per second as a streaming source (0 = all at once, bounded)."},
		{name: "caller", group: groupCaller, define: bind(&o.Caller, "http"),
			usage: "Registered caller to use (built in: http, echo; see pipeline.RegisterCaller)."},
		{name: "url", group: groupCaller, define: bind(&o.CallerOptions.URL, ""),
			usage: "URL the http caller sends each payload to."},
		{name: "method", group: groupCaller, define: bind(&o.CallerOptions.Method, "POST"),
			usage: "HTTP method of the http caller."},
		{name: "content_type", group: groupCaller, define: bind(&o.CallerOptions.ContentType, "application/json"),
			usage: "Content-Type of the http caller's requests."},
		{name: "header", group: groupCaller, define: funcFlag(headerFlag(o.CallerOptions.Headers)),
			usage: "HTTP header 'Name: value' sent on every call (repeatable). The value is redacted from errors and outputs but is part of the job graph (shown by Beam's debug logs): use --header_env for secrets."},
		{name: "header_env", group: groupCaller, define: funcFlag(headerEnvFlag(o.CallerOptions.HeaderEnv)),
			usage: "HTTP header from an environment variable on the worker, 'Name=ENV_VAR' (repeatable; keeps secrets out of the job graph)."},
		{name: "max_response_bytes", group: groupCaller, define: bind(&o.CallerOptions.MaxResponse, 10<<20),
			usage: "Largest response body the http caller accepts (0 means the default, 10 MiB); a larger 2xx body is an error."},
		{name: "item_status_field", group: groupCaller, define: bind(&o.CallerOptions.ItemStatusField, ""),
			usage: "Batched http calls: the member of each answer entry that holds its item's HTTP status (an entry whose status is >= 300 fails that item alone; 429 throttles it)."},
		{name: "throttle_mode", group: groupThrottle, define: bind(&o.Mode, string(throttle.ModePaced)), setting: "WithMode", option: []throttle.Option{throttle.WithMode(throttle.Mode(o.Mode))},
			usage: "Throttle algorithm: paced (the default: spaces calls at the rate the backend accepts and postpones the rest) or sre (the original tool's SRE throttle: rejects at random, about K times the accepted rate gets through)."},
		{name: "throttle_scope", group: groupThrottle, define: bind(&o.Scope, ""), setting: "WithScope", option: []throttle.Option{throttle.WithScope(throttle.Scope(o.Scope))},
			usage: "Which groups share one throttle: worker (all the groups on a worker pace together; the default with paced) or group (each group alone, its state in Beam state; the default with sre)."},
		{name: "k", group: groupThrottle, define: bind(&o.K, 0), setting: "WithSRE.K",
			usage: "SRE throttle multiplier K (> 0; 0 means 2): the client sends at most about K times what the backend accepts."},
		{name: "window", group: groupThrottle, define: bind(&o.Window, "fixed"),
			usage: "Throttle counter window: fixed (reset every --reset_interval) or sliding (--window_size in --bucket buckets)."},
		{name: "reset_interval", group: groupThrottle, define: bind(&o.ResetInterval, 0), setting: "WithSRE.ResetInterval",
			usage: "Fixed window: how often the counters are zeroed (0 means 1m)."},
		{name: "window_size", group: groupThrottle, define: bind(&o.WindowSize, 0), setting: "WithSRE.WindowSize",
			usage: "Sliding window: length of the window (0 means 2m)."},
		{name: "bucket", group: groupThrottle, define: bind(&o.Bucket, 0), setting: "WithSRE.Bucket",
			usage: "Sliding window: bucket width (0 means 1s)."},
		{name: "groups", group: groupThrottle, define: bind(&o.Groups, defaults.Groups), setting: "WithGroups", option: []throttle.Option{throttle.WithGroups(o.Groups)},
			usage: "Number of throttle groups (parallelism; each has its own queue, and its own throttle state with --throttle_scope=group)."},
		{name: "batch_size", group: groupThrottle, define: bind(&o.BatchSize, defaults.BatchSize), setting: "WithBatchSize", option: []throttle.Option{throttle.WithBatchSize(o.BatchSize)},
			usage: "Max elements a group processes per batch interval."},
		{name: "batch_interval", group: groupThrottle, define: bind(&o.BatchInterval, defaults.BatchInterval), setting: "WithBatchInterval", option: []throttle.Option{throttle.WithBatchInterval(o.BatchInterval)},
			usage: "How often a group with buffered elements processes a batch."},
		{name: "calls_in_flight", group: groupThrottle, define: bind(&o.CallsInFlight, defaults.CallsInFlight), setting: "WithCallsInFlight", option: []throttle.Option{throttle.WithCallsInFlight(o.CallsInFlight)},
			usage: "Calls a group may have under way at once; 0 sizes it to the group's pace at the calls' latency, the worker's calls bound together by their latency's climb (up to 256; 1 if calls take 100 ms or less, or in the sre mode), 1 keeps calls one at a time."},
		{name: "call_timeout", group: groupThrottle, define: bind(&o.CallTimeout, defaults.CallTimeout), setting: "WithCallTimeout", option: []throttle.Option{throttle.WithCallTimeout(o.CallTimeout)},
			usage: "Per-call timeout; a call past it goes to errors."},
		{name: "items_per_call", group: groupThrottle, define: bind(&o.ItemsPerCall, defaults.ItemsPerCall), setting: "WithItemsPerCall", option: []throttle.Option{throttle.WithItemsPerCall(cmp.Or(o.ItemsPerCall, defaults.ItemsPerCall))},
			usage: "Elements per call (0 means 1): above 1, up to this many elements go in one call of the caller's batch form (the http caller: a JSON array of the payloads, answered by a JSON array)."},
		{name: "bytes_per_call", group: groupThrottle, define: bind(&o.BytesPerCall, 0), setting: "WithBytesPerCall", option: []throttle.Option{throttle.WithBytesPerCall(o.BytesPerCall)},
			usage: "Batched calls: most payload bytes in one call (0 = no bound; an element larger than it goes alone)."},
		{name: "cost", group: groupThrottle, define: bind(&o.Cost, "1"),
			usage: "What an element costs against the pacer and --quota_rate: 1 (each element one unit), bytes (its payload's size), call (one unit per call, for quotas counted in requests when calls are batched) or json:FIELD (the integer in the payload's top-level JSON field, e.g. json:tokens)."},
		{name: "priority", group: groupThrottle, define: bind(&o.Priority, ""),
			usage: "Where an element's priority tier comes from: json:FIELD (a top-level field of its JSON payload) or attr:NAME (a Pub/Sub attribute), holding high, normal or low (or a number: above 0 high, below 0 low); missing means normal. A group calls for high elements first, and what waits longest and is shed first is low. Empty: every element normal."},
		{name: "strategy", group: groupThrottle, define: bind(&o.Strategy, ""), setting: "WithStrategy", option: []throttle.Option{throttle.WithStrategy(throttle.Strategy(o.Strategy))},
			usage: "What to do with throttled elements: postpone (keep them queued until --max_wait; the default with --throttle_mode=paced), route (to the throttled outputs; the default with sre), drop, or retry."},
		{name: "max_attempts", group: groupThrottle, define: bind(&o.MaxAttempts, defaults.MaxAttempts), setting: "WithMaxAttempts", option: []throttle.Option{throttle.WithMaxAttempts(o.MaxAttempts)},
			usage: "Retry strategy: max attempts per element in this run."},
		{name: "max_age", group: groupThrottle, define: bind(&o.MaxAge, defaults.MaxAge), setting: "WithMaxAge", option: []throttle.Option{throttle.WithMaxAge(o.MaxAge)},
			usage: "Retry strategy: max time since an element's first attempt."},
		{name: "max_wait", group: groupThrottle, define: valueFlag((*maxWaitFlag)(&o.MaxWait)), setting: "WithMaxWait WithMaxStall", option: []throttle.Option{throttle.WithMaxWait(o.maxWait()), throttle.WithMaxStall(o.maxStall())},
			usage: "Postpone strategy: longest an element waits in its group's queue before it goes to client_throttled (or server_throttled after a 429): a duration, none or 0 (no bound; 0s too) or auto: for files and --generate, no bound while calls are accepted (every element is tried) but 10m once none has been, so a job against an API that refuses everything ends; 10m for --subscription and --generate_rate (bounds latency and backlog). An element that cannot be sent before its bound (a longer Retry-After) goes at once."},
		{name: "max_buffered", group: groupThrottle, define: bind(&o.MaxBuffered, 0), setting: "WithMaxBuffered", option: []throttle.Option{throttle.WithMaxBuffered(o.MaxBuffered)},
			usage: "Max elements buffered per group; more are shed to client_throttled at once (0 = no bound)."},
		{name: "max_payload_bytes", group: groupThrottle, define: bind(&o.MaxPayload, 0),
			usage: "Payloads larger than this go to errors without a call (0 = no limit)."},
		{name: "failures_as_rejects", group: groupThrottle, define: bind(&o.FailuresAsRejects, false),
			usage: "Count non-overload failures (e.g. HTTP 400) as backend rejections in the throttle."},
		{name: "cache", group: groupCache, define: bind(&o.Cache, "none"),
			usage: "Response cache, so that a repeated request costs no call and no quota: none, memory (an LRU on each worker) or redis (Redis or Memorystore at --cache_address, shared by every worker and job). Only successes are cached; a cache that fails is skipped (counted in cache_errors)."},
		{name: "cache_address", group: groupCache, define: bind(&o.CacheAddr, ""),
			usage: "host:port of the --cache=redis server."},
		{name: "cache_ttl", group: groupCache, define: bind(&o.CacheTTL, defaultCacheTTL), setting: "WithCache",
			usage: "How long a cached response is served (0: until evicted)."},
		{name: "cache_key", group: groupCache, define: bind(&o.CacheKey, ""),
			usage: "What identifies a request in the cache: empty for a hash of its payload, or json:FIELD for a top-level field of its JSON payload (e.g. json:id)."},
		{name: "quota_backend", group: groupQuota, define: bind(&o.QuotaBackend, "none"), setting: "WithQuota.Backend",
			usage: "Quota for every group, worker and job: none, local (a known rate, --quota_rate, for this worker alone: calls sent on evenly spaced slots), redis (a GCRA in Redis or Memorystore at --quota_rate, shared: every worker sends on slots of one evenly spaced stream) or envoy (Envoy's rate-limit service, limits in its configuration for --quota_domain)."},
		{name: "quota_address", group: groupQuota, define: bind(&o.QuotaAddr, ""), setting: "WithQuota.Addr",
			usage: "host:port of the quota's Redis or rate-limit service."},
		{name: "quota_key", group: groupQuota, define: bind(&o.QuotaKey, ""), setting: "WithQuota.Key",
			usage: "Name of the shared quota: EVERY JOB WITH THE SAME KEY ON THE SAME SERVICE SHARES ONE QUOTA, on purpose or not (default: --name, itself beamthrottle unless set: give unrelated jobs their own). With redis, the key records its --quota_rate and --quota_burst, and a job with others on the same key is refused at start. For envoy, the value of the descriptor's last entry, key."},
		{name: "quota_rate", group: groupQuota, define: bind(&o.QuotaRate, ""), setting: "WithQuota.Rate",
			usage: "local, redis: the quota, as permits per period: 600/m, 10/s, 36000/h or 5/2s."},
		{name: "quota_burst", group: groupQuota, define: bind(&o.QuotaBurst, 0), setting: "WithQuota.Burst",
			usage: "redis: 0 or 1 for time slots with no burst; above 1, a token bucket of that many permits, granted as counts (for APIs that allow bursts)."},
		{name: "quota_high_share", group: groupQuota, define: bind(&o.QuotaHighShare, 0), setting: "WithQuota.HighShare",
			usage: "local, redis (time slots): a share of --quota_rate kept for high-priority elements (--priority): while they are being sent, the normal and low tiers of every job on --quota_key take at most the rest; in [0, 1)."},
		{name: "quota_normal_share", group: groupQuota, define: bind(&o.QuotaNormalShare, 0), setting: "WithQuota.NormalShare",
			usage: "local, redis (time slots): a share of --quota_rate kept for normal-priority elements and above: while they are being sent, the low tier takes at most the rest; in [0, 1)."},
		{name: "quota_domain", group: groupQuota, define: bind(&o.QuotaDomain, ""), setting: "WithQuota.Domain",
			usage: "envoy: the domain of the limits in the rate-limit service's configuration."},
		{name: "quota_descriptors", group: groupQuota, define: bind(&o.QuotaDescriptors, ""), setting: "WithQuota.Descriptors",
			usage: "envoy: descriptor entries before the key entry, as k=v,k2=v2."},
		{name: "quota_fail", group: groupQuota, define: bind(&o.QuotaFail, "open"),
			usage: "When the quota's service does not answer within --quota_timeout: open (send, limited by the adaptive throttle alone; counted and logged) or closed (postpone until it answers)."},
		{name: "quota_timeout", group: groupQuota, define: bind(&o.QuotaTimeout, defaults.QuotaTimeout), setting: "WithQuota.Timeout",
			usage: "Longest wait for one round trip to the quota's service."},
		{name: "output_prefix", group: groupOutputs, define: bind(&o.OutputPrefix, ""),
			usage: "Write each outcome as JSONL files <prefix><outcome>-<uuid>.jsonl (local path or gs://)."},
		{name: "success_topic", group: groupOutputs, define: bind(&o.SuccessTopic, ""),
			usage: "Pub/Sub topic for successful responses (optional)."},
		{name: "dead_letter_topic", group: groupOutputs, define: bind(&o.DeadLetterTopic, ""),
			usage: "Pub/Sub dead-letter topic: client- and server-throttled payloads with attributes."},
		{name: "dead_letter_errors", group: groupOutputs, define: bind(&o.DeadLetterErrors, false),
			usage: "Also publish errors to the dead-letter topic."},
		{name: "name", group: groupOutputs, define: bind(&o.Name, defaultName),
			usage: "Pipeline name, written to dead-letter attributes, and the default --quota_key: JOBS WITH THE SAME --name (beamthrottle unless set) SHARE ONE QUOTA on the same quota service."},
		{name: "pubsub_project", group: groupPubSub, define: bind(&o.Project, ""),
			usage: "Project of Pub/Sub topics and subscriptions given as IDs (default: --project, else beamthrottle-local)."},
		{name: "pubsub_emulator", group: groupPubSub, define: bind(&o.PubSubHost, ""),
			usage: "host:port of a Pub/Sub emulator (default: $PUBSUB_EMULATOR_HOST, else the real service)."},
		{name: "publish_timeout", group: groupPubSub, define: bind(&o.PublishTimeout, 60*time.Second),
			usage: "How long one Pub/Sub publish may take (retries included) before its bundle fails and is retried."},
		{name: "reprocess", group: groupReprocess, define: bind(&o.Reprocess, false),
			usage: "Reprocessing mode: read the dead-letter --subscription and send each payload through the throttle again."},
		{name: "max_total_attempts", group: groupReprocess, define: bind(&o.MaxTotalAttempts, defaultMaxTotalAttempts),
			usage: "Reprocessing: messages whose attempts reach this are parked instead of retried."},
		{name: "parked_topic", group: groupReprocess, define: bind(&o.ParkedTopic, ""),
			usage: "Reprocessing: topic for parked messages (default: files <output_prefix>parked-*.jsonl)."},
	}
}

// Flag defaults.
const (
	defaultName             = "beamthrottle"
	defaultMaxTotalAttempts = 5
	defaultCacheTTL         = time.Hour
)

// bind returns the definition of a flag of Go type T stored in p, with
// default def: the flag package's Var of that type, so that --help names
// the type.
func bind[T bool | int | int64 | float64 | string | time.Duration](p *T, def T) func(*flag.FlagSet, string, string) {
	return func(fs *flag.FlagSet, name, usage string) {
		switch p := any(p).(type) {
		case *bool:
			fs.BoolVar(p, name, any(def).(bool), usage)
		case *int:
			fs.IntVar(p, name, any(def).(int), usage)
		case *int64:
			fs.Int64Var(p, name, any(def).(int64), usage)
		case *float64:
			fs.Float64Var(p, name, any(def).(float64), usage)
		case *string:
			fs.StringVar(p, name, any(def).(string), usage)
		case *time.Duration:
			fs.DurationVar(p, name, any(def).(time.Duration), usage)
		}
	}
}

// valueFlag returns the definition of a flag of its own flag.Value type;
// its default is v's value.
func valueFlag(v flag.Value) func(*flag.FlagSet, string, string) {
	return func(fs *flag.FlagSet, name, usage string) { fs.Var(v, name, usage) }
}

// funcFlag returns the definition of a flag whose every use calls set (a
// repeatable flag).
func funcFlag(set func(string) error) func(*flag.FlagSet, string, string) {
	return func(fs *flag.FlagSet, name, usage string) { fs.Func(name, usage, set) }
}

// headerFlag parses --header's 'Name: value' into headers.
func headerFlag(headers map[string]string) func(string) error {
	return func(v string) error {
		name, value, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return errors.New("want 'Name: value'")
		}
		headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
		return nil
	}
}

// headerEnvFlag parses --header_env's 'Name=ENV_VAR' into env.
func headerEnvFlag(env map[string]string) func(string) error {
	return func(v string) error {
		name, variable, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(variable) == "" {
			return errors.New("want 'Name=ENV_VAR'")
		}
		env[strings.TrimSpace(name)] = strings.TrimSpace(variable)
		return nil
	}
}

// helpGroups returns the groups of the flags in --help, in its order.
func helpGroups() []flaghelp.Group {
	var groups []flaghelp.Group
	for _, f := range flagTable(new(Options)) {
		if n := len(groups); n == 0 || groups[n-1].Title != f.group {
			groups = append(groups, flaghelp.Group{Title: f.group})
		}
		g := &groups[len(groups)-1]
		g.Flags = append(g.Flags, f.name)
	}
	return groups
}

func init() { flaghelp.Pipeline = helpGroups() }
