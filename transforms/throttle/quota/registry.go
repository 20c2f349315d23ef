package quota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Settings are what a backend opens a quota with: plain values, so that
// transforms/throttle can serialise them into its DoFn and each worker can
// open the backend again in Setup. A zero value means not set; a backend
// refuses what it requires and is not set, and documents what it ignores.
type Settings struct {
	// Addr is the host:port of the backend's service, if it has one.
	Addr string
	// Key names the quota: every client of the service that uses the same
	// key shares it. It is also the key every Take and Reserve is given.
	Key string
	// Rate is the size of the quota, or the zero Rate when it is kept in
	// the service's own configuration. A backend whose Quota is a Reserver
	// hands out its slots at Rate, which transforms/throttle's pacer then
	// keeps to.
	Rate Rate
	// Burst, above 1, is the most permits a quota of counts grants at once
	// after a quiet spell; 0 and 1 ask for none (time slots, from a backend
	// that has them).
	Burst int
	// Shares keeps parts of Rate for higher priority tiers (see
	// [Reserver.ReserveTier]); the zero value keeps nothing. A Quota that is
	// not a Reserver ignores it.
	Shares Shares
	// Params are the backend's own settings, by name, such as the domain
	// of Envoy's rate-limit service ("domain").
	Params map[string]string
}

// ConfigError says that a backend cannot open a quota with one of its
// Settings, or that the service holds other settings for the same key (see
// [Checker]).
type ConfigError struct {
	// Field is the Settings field at fault ("Addr", "Key", "Rate", "Burst",
	// "Shares"), or "Params." and the name of a parameter.
	Field string
	Err   error // what is wrong
}

// Error returns "quota: Field: what is wrong".
func (e *ConfigError) Error() string { return "quota: " + e.Field + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }

// Checker is implemented by a Quota whose clients must agree on their
// settings, such as a GCRA in Redis, which every client of a key must run
// at the same rate. Check asks the service whether the quota's Settings
// agree with those of the other clients of its key, and records them for
// the next ones. It returns a *ConfigError naming the field at fault when
// they do not agree, and another error when the service could not be
// asked. transforms/throttle checks before a job starts, and once on each
// worker.
type Checker interface {
	Check(ctx context.Context) error
}

// backends are the registered backends, by name.
var backends = struct {
	sync.RWMutex
	open map[string]func(context.Context, Settings) (Quota, error)
}{open: map[string]func(context.Context, Settings) (Quota, error){}}

// Register makes a backend available under name, to [Open] and to
// transforms/throttle's QuotaConfig.Backend, as database/sql's Register
// does for drivers. Call it from the init function of the backend's
// package, so that importing the package, even blank, opts in.
//
// open returns the backend's Quota for the settings. It checks them first,
// returning a *ConfigError for each field at fault (several joined with
// errors.Join), and does not wait for the service: it connects on first
// use, since transforms/throttle opens a quota (and closes it) to check its
// settings when the pipeline is constructed, before opening it on each
// worker. The Quota it returns may also be a [Reserver] (it hands out time
// slots, and transforms/throttle then reserves rather than takes), a
// [Windowed], a [Checker] and an io.Closer.
//
// Register panics if name is "" or "none" (the names of no quota), if open
// is nil, or if a backend is already registered under name.
func Register(name string, open func(ctx context.Context, s Settings) (Quota, error)) {
	if name == "" || name == "none" || open == nil {
		panic(fmt.Sprintf("quota: Register(%q): a name other than \"\" and \"none\", and an open function, are required", name))
	}
	backends.Lock()
	defer backends.Unlock()
	if _, dup := backends.open[name]; dup {
		panic(fmt.Sprintf("quota: Register(%q): a backend is already registered under that name", name))
	}
	backends.open[name] = open
}

// Open returns the Quota of the backend registered under name for s, or
// the errors of its open function (see [Register]), or an error naming the
// registered backends if there is none under name. Close the Quota, if it
// is an io.Closer, when done with it.
func Open(ctx context.Context, name string, s Settings) (Quota, error) {
	backends.RLock()
	open := backends.open[name]
	backends.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("quota: no backend %q (registered: %s); a backend registers itself when its package is imported", name, strings.Join(Backends(), ", "))
	}
	q, err := open(ctx, s)
	if err == nil && q == nil {
		err = errors.New("quota: backend " + name + " opened no quota")
	}
	return q, err
}

// Backends returns the names of the registered backends, sorted: "local"
// (built in) and those of the backend packages the program imports.
func Backends() []string {
	backends.RLock()
	defer backends.RUnlock()
	return slices.Sorted(maps.Keys(backends.open))
}
