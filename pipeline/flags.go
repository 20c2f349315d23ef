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
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// RegisterFlags defines the pipeline's flags on fs and returns the Options
// they fill when fs is parsed. Flag names use Beam's snake_case style and do
// not collide with Beam's own flags (--runner, --endpoint, --project, ...).
// Header values given with --header are never logged or written to outputs.
func RegisterFlags(fs *flag.FlagSet) *Options {
	o := &Options{CallerOptions: CallerOptions{Headers: map[string]string{}, HeaderEnv: map[string]string{}}}
	for _, f := range flagTable(o) {
		f.define(fs, f.name, f.usage)
	}
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

// throttleFlags names the flag of each throttle setting, as the throttle
// layer names it in its errors (throttle.OptionError: Option, or
// Option.Field for an option of several values): the settings of
// flagTable's rows.
var throttleFlags = func() map[string]string {
	m := map[string]string{}
	for _, f := range flagTable(new(Options)) {
		for _, setting := range strings.Fields(f.setting) {
			m[setting] = f.name
		}
	}
	return m
}()

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
