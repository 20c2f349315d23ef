// Package envoyquota keeps transforms/throttle's shared quota in Envoy's
// rate-limit service (RLS v3 ShouldRateLimit), whose limits live in the
// service's configuration. Importing it registers the backend "envoy" with
// package quota:
//
//	import _ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/envoyquota"
//
// [Quota] grants counts of permits, asked for in chunks so that a batch is
// granted what the service's current window has left; the service counts
// in fixed windows, so the permits lapse at the window's end
// (quota.Windowed), and it cannot hand out time slots.
//
// Every Take is one round trip at most. Errors (service unreachable,
// answer later than ctx's deadline) are returned, wrapped, for the caller
// to fail open or closed; errors.Is finds context.DeadlineExceeded and
// context.Canceled in them.
package envoyquota

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

func init() { quota.Register("envoy", open) }

// The parameters of the backend "envoy" (quota.Settings.Params).
const (
	// paramDomain is the domain of the limits in the service's
	// configuration. Required.
	paramDomain = "domain"
	// paramDescriptors are the descriptor's entries before the key's, as
	// "k=v,k2=v2" (see ParseEntries).
	paramDescriptors = "descriptors"
)

// keyEntry is the name of the descriptor's last entry, whose value is
// quota.Settings.Key.
const keyEntry = "key"

// open opens the backend "envoy" for s: the rate-limit service at s.Addr
// (host:port), required, asked for the limits of the domain
// s.Params["domain"], required, with the descriptor of the entries in
// s.Params["descriptors"] and then key=s.Key (s.Key required). Rate,
// Burst, Shares and other Params are not used: the limits are in the
// service's configuration. It does not contact the service.
func open(_ context.Context, s quota.Settings) (quota.Quota, error) {
	var errs []error
	bad := func(field string, err error) { errs = append(errs, &quota.ConfigError{Field: field, Err: err}) }
	if s.Params[paramDomain] == "" {
		bad("Params."+paramDomain, errors.New("required with the envoy backend"))
	}
	var entries []Entry
	if d := s.Params[paramDescriptors]; d != "" {
		var err error
		if entries, err = ParseEntries(d); err != nil {
			bad("Params."+paramDescriptors, err)
		}
	}
	if s.Addr == "" {
		bad("Addr", errors.New("required with the envoy backend"))
	} else if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		bad("Addr", fmt.Errorf("want host:port, got %q", s.Addr))
	}
	if s.Key == "" {
		bad("Key", errors.New("required with the envoy backend"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return New(Config{Addr: s.Addr, Domain: s.Params[paramDomain], Entries: entries, KeyEntry: keyEntry})
}

// wrap returns err with the package's prefix and the message made of format
// and args, and ctx's error if ctx is done, for errors.Is to find even when
// the client reports it as a gRPC status.
func wrap(ctx context.Context, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("envoyquota: %s: %w: %w", msg, cerr, err)
	}
	return fmt.Errorf("envoyquota: %s: %w", msg, err)
}
