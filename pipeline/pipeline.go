// Package pipeline is beamthrottle's runnable pipeline: it reads payloads
// from files, a Pub/Sub subscription or a built-in generator, throttles the
// calls to a quota-limited API through transforms/throttle, and writes each
// outcome to JSONL files and/or Pub/Sub topics (a dead-letter topic for the
// throttled ones). Reprocessing mode reads a dead-letter subscription and
// sends the payloads through the throttle again.
//
// The binary in cmd/beamthrottle wires flags to Options; Build can also be
// used from a user's own main with their own registered caller (see
// RegisterCaller). The package imports the quota backends redis and envoy
// (transforms/throttle/quota/redisquota, envoyquota), so --quota_backend
// offers them.
package pipeline

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"

	// The quota backends --quota_backend offers besides local: each
	// registers itself with package quota.
	_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/envoyquota"
	_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
)

// Options configure the pipeline. Start from those RegisterFlags fills,
// which hold the flags' defaults. The throttle settings go to the transform
// as they are and are checked there (see Validate), so a zero where the
// transform needs a positive value (Groups, BatchSize, ...) is refused; a
// zero K, ResetInterval, WindowSize or Bucket, and an empty Mode, Window,
// Strategy or Scope, mean the transform's defaults.
type Options struct {
	// Name names the pipeline in dead-letter attributes and logs.
	Name string

	// Sources: exactly one of Input, Subscription or Generate.
	Input        string  // file glob (bounded)
	InputFormat  string  // "text" (default: payloads as they are) or "jsonl" (payloads must be JSON)
	Subscription string  // Pub/Sub subscription (unbounded unless IdleTimeout > 0)
	Generate     int     // number of synthetic elements (bounded)
	GenerateRate float64 // with Generate: emit them at this rate, as an unbounded (streaming) source
	IdleTimeout  time.Duration
	// FreshSubscription says that no run before this one read Subscription
	// (the demo creates it), so no message can still be leased: Check then
	// does not warn about an IdleTimeout shorter than the lease. Not a flag.
	FreshSubscription bool
	Project           string // Pub/Sub project
	PubSubHost        string // Pub/Sub emulator host:port ("" = PUBSUB_EMULATOR_HOST or production)
	// PublishTimeout bounds one publish (retries included) before the
	// bundle fails; 0 means pubsubio.DefaultPublishTimeout.
	PublishTimeout time.Duration

	// Caller.
	Caller        string // registered caller name, default "http"
	CallerOptions CallerOptions

	// Throttle.
	Mode          string // "paced" or "sre", in any case ("" is the transform's default, paced)
	Scope         string // "worker", "group" or "" (the mode's default)
	Groups        int
	BatchSize     int
	BatchInterval time.Duration
	K             float64
	Window        string // "fixed" ("" too) or "sliding"
	ResetInterval time.Duration
	WindowSize    time.Duration
	Bucket        time.Duration
	Strategy      string
	MaxAttempts   int
	MaxAge        time.Duration
	CallTimeout   time.Duration
	CallsInFlight int
	ItemsPerCall  int    // elements per call (> 1: the caller's batch form)
	BytesPerCall  int    // payload bytes per batched call at most (0 = no bound)
	Cost          string // what an element costs: "" or "1", "bytes" (throttle.WithByteCost), "call" (WithCallCost) or "json:FIELD" (a JSONCost)
	MaxPayload    int
	MaxBuffered   int
	// MaxWait bounds how long an element waits in its group's queue under
	// the postpone strategy: 0 means DefaultStreamingMaxWait for streaming
	// sources (a subscription, GenerateRate) and, for bounded ones, no bound
	// while calls are accepted but DefaultBoundedMaxStall without one;
	// NoMaxWait means no bound.
	MaxWait           time.Duration
	FailuresAsRejects bool

	// Response cache (throttle.WithCache): Cache "none" or "" for none,
	// "memory" or "redis" (at CacheAddr); CacheTTL 0 keeps responses until
	// evicted; CacheKey "" keys by the payload's hash, "json:FIELD" by a
	// field of it (JSONCacheKey).
	Cache, CacheAddr, CacheKey string
	CacheTTL                   time.Duration
	// Priority is where an element's priority tier comes from: "" (every
	// element normal), "json:FIELD" (a JSONPriority) or "attr:NAME" (an
	// AttrPriority).
	Priority string

	// Shared quota (throttle.QuotaConfig): QuotaBackend "none" or "" for
	// none, "local", "redis" or "envoy"; QuotaKey "" means Name; QuotaFail "open"
	// ("" too) or "closed".
	QuotaBackend, QuotaAddr, QuotaKey, QuotaRate string
	QuotaBurst                                   int
	QuotaHighShare, QuotaNormalShare             float64 // shares of QuotaRate kept for tiers (see --priority)
	QuotaDomain, QuotaDescriptors, QuotaFail     string
	QuotaTimeout                                 time.Duration

	// Sinks.
	OutputPrefix     string // files <prefix><outcome>-<uuid>.jsonl; "" = no files
	SuccessTopic     string
	DeadLetterTopic  string // client- and server-throttled records
	DeadLetterErrors bool   // also errors to the dead-letter topic
	// FlushInterval is how often a streaming run (Subscription, or Generate
	// with GenerateRate) finalises its output files and acknowledges the
	// messages in them; 0 means DefaultFlushInterval. A bounded run writes
	// its files once, at the end. See WriteLines.
	FlushInterval time.Duration

	// Reprocessing.
	Reprocess        bool   // read the dead-letter subscription and throttle again
	MaxTotalAttempts int    // messages past it are parked
	ParkedTopic      string // parked messages ("" = files under OutputPrefix)

	reprocessRun string // set by Reprocess: its dead letters carry it (AttrReprocessRun)
	monitor      string // set by Run: the ID of the run, its Monitor's key
}

// throttleOptions turns Options into transform options, every setting
// passed as it is, and checks them where the throttle layer defines its
// rules; the error names the flags at fault (see flagErrors). The options
// a flag sets alone come from its row of flagTable; those several flags
// make together are built here.
func (o Options) throttleOptions() ([]throttle.Option, error) {
	var opts []throttle.Option
	for _, f := range flagTable(&o) {
		opts = append(opts, f.option...)
	}
	var errs []error
	sre := adaptive.SREConfig{K: o.K, CountFailuresAsRejects: o.FailuresAsRejects}
	switch strings.ToLower(o.Window) {
	case "", "fixed":
		sre.ResetInterval = o.ResetInterval
		opts = append(opts, throttle.WithSRE(sre))
	case "sliding":
		sre.Sliding, sre.WindowSize, sre.Bucket = true, o.WindowSize, o.Bucket
		opts = append(opts, throttle.WithSRE(sre))
	default:
		errs = append(errs, fmt.Errorf("--window: must be fixed or sliding, got %q", o.Window))
	}
	if strings.EqualFold(o.Strategy, string(throttle.Drop)) && o.Subscription != "" {
		errs = append(errs, errors.New("--strategy: drop cannot be used with --subscription: a dropped message is never written, so it would never be acknowledged"))
	}
	q, err := o.quota()
	errs = append(errs, err)
	cost, err := parseCost(o.Cost)
	errs = append(errs, err)
	if cost != nil {
		opts = append(opts, cost)
	}
	priority, err := parsePriority(o.Priority)
	errs = append(errs, err)
	if priority != nil {
		opts = append(opts, priority)
	}
	cache, err := o.cacheOptions()
	errs = append(errs, err)
	opts = append(opts, cache...)
	opts = append(opts, throttle.WithQuota(q))
	if err := errors.Join(append(errs, throttle.ValidateOptions(opts...))...); err != nil {
		return nil, flagErrors(err)
	}
	return opts, nil
}

// Max wait settings of Options.MaxWait.
const (
	// NoMaxWait lets elements wait in the queue without bound.
	NoMaxWait time.Duration = -1
	// DefaultStreamingMaxWait is the max wait of streaming sources: it
	// bounds the latency of an element and the backlog of a stream that
	// offers more than the quota for good; what waits longer goes to the
	// throttled outputs (the dead-letter topic) for a later reprocessing.
	// Bounded sources have DefaultBoundedMaxStall instead.
	DefaultStreamingMaxWait = 10 * time.Minute
	// DefaultBoundedMaxStall is the bound of bounded sources (files,
	// Generate): an element waits as long as calls keep being accepted, so
	// every element is tried and the job takes as long as the quota needs;
	// but once no call has been accepted for this long (an API that
	// refuses everything, or cannot be reached), what still waits goes to
	// the throttled outputs and the job ends. A Retry-After longer than
	// that ends it at once.
	DefaultBoundedMaxStall = 10 * time.Minute
)

// quota returns the shared quota of the options; its error names
// --quota_fail, the one quota setting the throttle layer does not have.
func (o Options) quota() (throttle.QuotaConfig, error) {
	q := throttle.QuotaConfig{
		Backend: o.QuotaBackend, Addr: o.QuotaAddr, Key: o.QuotaKey, Rate: o.QuotaRate,
		Burst: o.QuotaBurst, Domain: o.QuotaDomain, Descriptors: o.QuotaDescriptors, FailOpen: true,
		Timeout: o.QuotaTimeout, HighShare: o.QuotaHighShare, NormalShare: o.QuotaNormalShare,
	}
	if q.Backend == "" {
		q.Backend = "none"
	}
	if q.Key == "" {
		q.Key = o.Name
	}
	switch o.QuotaFail {
	case "", "open":
	case "closed":
		q.FailOpen = false
	default:
		return q, fmt.Errorf("--quota_fail: want open or closed, got %q", o.QuotaFail)
	}
	return q, nil
}

// maxStall resolves MaxWait for the source: the bound on a wait without
// progress (throttle.WithMaxStall), or 0 for none.
func (o Options) maxStall() time.Duration {
	if o.MaxWait == 0 && !o.streaming() {
		return DefaultBoundedMaxStall
	}
	return 0
}

// streaming reports whether the source is unbounded (a subscription, or
// Generate at GenerateRate).
func (o Options) streaming() bool { return o.Subscription != "" || o.GenerateRate > 0 }

// maxWait resolves MaxWait for the source: the bound, or 0 for none.
func (o Options) maxWait() time.Duration {
	switch {
	case o.MaxWait < 0:
		return 0
	case o.MaxWait > 0:
		return o.MaxWait
	case o.streaming():
		return DefaultStreamingMaxWait
	}
	return 0
}

// Outputs are the formatted outputs of Build, as PCollection<Line> of JSON
// lines, already written to the configured sinks.
type Outputs struct {
	Success, ClientThrottled, ServerThrottled, Errors beam.PCollection
}

// Build adds the pipeline to s: source → throttle → sinks, or the
// reprocessing pipeline when o.Reprocess is set (see Reprocess).
func Build(s beam.Scope, o Options) (Outputs, error) {
	if o.FlushInterval < 0 {
		return Outputs{}, fmt.Errorf("pipeline: Options.FlushInterval is negative: %v", o.FlushInterval)
	}
	if o.Reprocess {
		return Reprocess(s, o)
	}
	var in beam.PCollection
	switch {
	case o.Generate > 0 && o.GenerateRate > 0:
		in = GenerateStream(s, o.Generate, o.GenerateRate)
	case o.Generate > 0:
		in = Generate(s, o.Generate)
	case o.Input != "":
		in = ReadFiles(s, o.Input)
	case o.Subscription != "":
		var err error
		if in, err = readSubscription(s, o.readConfig()); err != nil {
			return Outputs{}, err
		}
	default:
		return Outputs{}, fmt.Errorf("no source: set --input, --subscription or --generate")
	}
	return throttleAndWrite(s, in, o, nil, nil)
}

// throttleAndWrite runs the throttle over a PCollection<Element> and writes
// the outcomes to the sinks. extraErrors (PCollection<throttle.Record>) join
// the errors output; extraDone (PCollection<string>) are ack IDs of messages
// already written elsewhere (parked). With a subscription source, each
// message is acknowledged once its output is durably written.
func throttleAndWrite(s beam.Scope, in beam.PCollection, o Options, extraErrors, extraDone []beam.PCollection) (Outputs, error) {
	topts, err := o.throttleOptions()
	if err != nil {
		return Outputs{}, err
	}
	name := o.Caller
	if name == "" {
		name = "http"
	}
	co := o.CallerOptions
	if co.Timeout == 0 {
		co.Timeout = o.CallTimeout // the http caller's own bound is no shorter than the call's
	}
	caller, err := newRegisteredCaller(name, co)
	if err != nil {
		return Outputs{}, err
	}
	caller.Monitor = o.monitor
	if o.ItemsPerCall > 1 || o.BytesPerCall > 0 {
		if err := caller.checkBatch(); err != nil {
			return Outputs{}, err
		}
	}
	// Payloads are checked here: empty, over --max_payload_bytes, or, with
	// --input_format=jsonl, not JSON: an error record, no call.
	var bad beam.PCollection
	in, bad = beam.ParDo2(s, &payloadCheckFn{Max: o.MaxPayload, JSON: o.InputFormat == "jsonl"}, in)
	extraErrors = append(extraErrors, bad)
	out, err := throttle.TryAdaptive(s, in, caller, topts...)
	if err != nil {
		return Outputs{}, err
	}
	errs := out.Errors
	if len(extraErrors) > 0 {
		errs = beam.Flatten(s, append([]beam.PCollection{errs}, extraErrors...)...)
	}
	ct, st := out.ClientThrottled, out.ServerThrottled
	// With a dead-letter topic, the records whose message Pub/Sub would
	// refuse become errors saying so (refused), in the errors files only:
	// every element is in one output.
	var deadMsgs, refused []beam.PCollection
	var published beam.PCollection // the errors also published (--dead_letter_errors)
	if o.DeadLetterTopic != "" {
		dl := &deadLetterFn{Pipeline: o.Name, Run: o.reprocessRun}
		split := func(records beam.PCollection) beam.PCollection {
			kept, msgs, bad := beam.ParDo3(s, dl, records)
			deadMsgs, refused = append(deadMsgs, msgs), append(refused, bad)
			return kept
		}
		ct, st = split(ct), split(st)
		if o.DeadLetterErrors {
			published = split(errs)
		}
	}
	res := Outputs{
		Success:         beam.ParDo(s, &resultLineFn{Monitor: o.monitor}, out.Success),
		ClientThrottled: beam.ParDo(s, &failureLineFn{Monitor: o.monitor}, ct),
		ServerThrottled: beam.ParDo(s, &failureLineFn{Monitor: o.monitor}, st),
	}
	// Every output is written to files; an outcome that also goes to a topic
	// counts as done (its message acknowledged) once published, otherwise
	// once its file is in place.
	written := map[string]beam.PCollection{
		OutSuccess:         WriteLines(s, o.OutputPrefix, OutSuccess, res.Success, o.writeOptions()...),
		OutClientThrottled: WriteLines(s, o.OutputPrefix, OutClientThrottled, res.ClientThrottled, o.writeOptions()...),
		OutServerThrottled: WriteLines(s, o.OutputPrefix, OutServerThrottled, res.ServerThrottled, o.writeOptions()...),
	}
	done := []beam.PCollection{written[OutSuccess]}
	if o.DeadLetterTopic != "" && o.DeadLetterErrors {
		// Two sinks of errors: those also published, done once published,
		// and those Pub/Sub refused, done once written.
		both := beam.ParDo(s, &failureLineFn{Monitor: o.monitor}, published)
		only := beam.ParDo(s, &failureLineFn{Monitor: o.monitor}, beam.Flatten(s, refused...))
		WriteLines(s, o.OutputPrefix, OutErrors, both, o.writeOptions()...)
		done = append(done, WriteLines(s, o.OutputPrefix, OutErrors, only, o.writeOptions()...))
		res.Errors = beam.Flatten(s, both, only)
	} else {
		all := errs
		if len(refused) > 0 {
			all = beam.Flatten(s, append([]beam.PCollection{errs}, refused...)...)
		}
		res.Errors = beam.ParDo(s, &failureLineFn{Monitor: o.monitor}, all)
		done = append(done, WriteLines(s, o.OutputPrefix, OutErrors, res.Errors, o.writeOptions()...))
	}
	if o.DeadLetterTopic != "" {
		pub, err := publish(s.Scope("DeadLetter"), o.publishConfig(o.DeadLetterTopic), o.files(), beam.Flatten(s, deadMsgs...))
		if err != nil {
			return Outputs{}, fmt.Errorf("--dead_letter_topic: %w", err)
		}
		done = append(done, pub)
	} else {
		done = append(done, written[OutClientThrottled], written[OutServerThrottled])
	}
	if o.SuccessTopic != "" {
		published, err := publish(s.Scope("Success"), o.publishConfig(o.SuccessTopic), o.files(), beam.ParDo(s, resultToMessage, out.Success))
		if err != nil {
			return Outputs{}, fmt.Errorf("--success_topic: %w", err)
		}
		done[0] = published
	}
	if err := ackDone(s, o.ackConfig(), append(done, extraDone...)); err != nil {
		return Outputs{}, fmt.Errorf("--subscription: %w", err)
	}
	return res, nil
}

// writeOptions are WriteLines' options for o: a streaming source writes its
// files every FlushInterval, a bounded one once at the end.
func (o Options) writeOptions() []WriteOption {
	if o.Subscription == "" && (o.Generate == 0 || o.GenerateRate == 0) {
		return nil
	}
	d := o.FlushInterval
	if d == 0 {
		d = DefaultFlushInterval
	}
	return []WriteOption{WithFlushInterval(d)}
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
