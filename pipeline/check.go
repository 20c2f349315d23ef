package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	beamrunners "github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/internal/runners"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// startEnv is what Check reads from Beam's flags: the runner and how it
// runs its workers.
type startEnv struct {
	Runner          string // --runner
	Endpoint        string // --endpoint
	EnvironmentType string // --environment_type
}

// workers says where the workers of r run with these flags.
func (e startEnv) workers(r runners.Runner) runners.Workers {
	loopback := strings.EqualFold(e.EnvironmentType, "loopback")
	switch r.Name {
	case "prism":
		// Embedded Prism forces LOOPBACK unless an environment is chosen;
		// with --endpoint it is a job server like universal's.
		if loopback || (e.Endpoint == "" && e.EnvironmentType == "") {
			return runners.WorkersHere
		}
		return runners.WorkersRemote
	case "universal", "flink", "spark":
		if loopback {
			return runners.WorkersHere
		}
	}
	return r.Workers
}

// listTimeout bounds the listing of --input at start (Cloud Storage retries
// transient errors until its context ends).
const listTimeout = 60 * time.Second

// Check makes the start-up checks that look beyond the option values, and
// names the flag at fault, before any pipeline is built:
//
//   - Beam's --runner names a runner of this binary;
//   - --input matches at least one file, listed through Beam's filesystems
//     as the file source will list it (local paths, gs://), and every local
//     match is a file this process can read, not a directory;
//   - --output_prefix names a filesystem of this binary and, where the
//     workers run in this process, can be written: a small file is created
//     under it (its directory too, if missing) and removed, as the file
//     sinks will;
//   - every --header_env variable is set and not empty;
//   - with --quota_backend=redis, the jobs already on --quota_key keep the
//     same --quota_rate and --quota_burst (throttle.QuotaConfig.Check); a
//     quota service that cannot be asked is a warning;
//   - --idle_timeout is at least the lease of the messages pulled from
//     --subscription (its ack deadline, read from Pub/Sub, and the
//     reader's own): if not, a warning says that a restart may stop while
//     messages a run that stopped holds are still leased.
//
// Validate checks the values and does no I/O; Check lists files (on Cloud
// Storage too), writes and removes a file under --output_prefix, asks
// Pub/Sub and the quota's Redis and reads the environment, so call it after Validate, just before Run. Where the
// runner's workers run elsewhere (Dataflow; a job server with docker or
// process workers) the workers' environment and filesystem decide: Check
// then writes a warning to warn (nil: none) instead of refusing a
// --header_env variable that is unset here, a local --input path that
// matches nothing here, or an --input it could not list, and leaves the
// files that match and the output prefix alone. A gs:// glob that matches
// nothing is refused on every runner. With a runner that executes nothing
// (dot, vet) only --runner is checked.
func (o Options) Check(ctx context.Context, warn io.Writer) error {
	return o.check(ctx, startEnv{
		Runner:          *beamrunners.Runner,
		Endpoint:        *jobopts.Endpoint,
		EnvironmentType: *jobopts.EnvironmentType,
	}, warn)
}

func (o Options) check(ctx context.Context, env startEnv, warn io.Writer) error {
	if warn == nil {
		warn = io.Discard
	}
	r, ok := runners.Lookup(env.Runner)
	if !ok {
		return fmt.Errorf("--runner: no runner %q in this binary (runners: %s)", env.Runner, runners.Names())
	}
	workers := env.workers(r)
	if workers == runners.WorkersNone {
		return nil
	}
	var errs []error
	if o.Input != "" {
		if err := checkInput(ctx, o.Input, workers, r.Name, warn); err != nil {
			errs = append(errs, err)
		}
	}
	if o.OutputPrefix != "" {
		if err := checkOutput(ctx, o.OutputPrefix, workers); err != nil {
			errs = append(errs, err)
		}
	}
	o.checkIdleTimeout(ctx, warn)
	if err := o.checkQuota(ctx, warn); err != nil {
		errs = append(errs, err)
	}
	names := make([]string, 0, len(o.CallerOptions.HeaderEnv))
	for name := range o.CallerOptions.HeaderEnv {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := o.CallerOptions.HeaderEnv[name]
		value, set := os.LookupEnv(v)
		if set && value != "" {
			continue
		}
		state := "not set"
		if set {
			state = "empty"
		}
		if workers == runners.WorkersRemote {
			fmt.Fprintf(warn, "warning: --header_env: %s=%s: $%s is %s here; the workers of --runner=%s read it, so their environment must have it\n", name, v, v, state, r.Name)
			continue
		}
		errs = append(errs, fmt.Errorf("--header_env: %s=%s: environment variable %s is %s (the workers of --runner=%s run in this process and read it here)", name, v, v, state, r.Name))
	}
	return errors.Join(errs...)
}

// checkInput lists the --input glob as Beam's file source will.
func checkInput(ctx context.Context, glob string, workers runners.Workers, runner string, warn io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return fmt.Errorf("--input: %v", err)
	}
	defer fs.Close()
	files, err := fs.List(ctx, glob)
	// A path without a scheme is on the local disk, which remote workers
	// do not share; a scheme (gs://) names the same store everywhere.
	local := !strings.Contains(glob, "://")
	switch {
	case err != nil && workers == runners.WorkersRemote:
		fmt.Fprintf(warn, "warning: --input: cannot list %q here (%v); the workers of --runner=%s will try with their own credentials\n", glob, err, runner)
		return nil
	case err != nil:
		return fmt.Errorf("--input: cannot list %q: %v", glob, err)
	case len(files) > 0 && local && workers == runners.WorkersHere:
		return checkLocalFiles(files)
	case len(files) > 0:
		return nil
	case local && workers == runners.WorkersRemote:
		fmt.Fprintf(warn, "warning: --input: no file matches %q here; the workers of --runner=%s must see it on their own disks\n", glob, runner)
		return nil
	}
	return fmt.Errorf("--input: no file matches %q", glob)
}

// checkLocalFiles checks that every file --input matched is a file this
// process can read: the file source fails the job on a directory or an
// unreadable file, after the pipeline has started.
func checkLocalFiles(files []string) error {
	var errs []error
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("--input: %v", err))
			continue
		}
		if fi.IsDir() {
			errs = append(errs, fmt.Errorf("--input: %q is a directory: name files, or a glob such as %q", f, filepath.Join(f, "*.jsonl")))
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("--input: cannot read %q: %v", f, err))
			continue
		}
		fh.Close()
	}
	return errors.Join(errs...)
}

// checkOutput checks that files can be written under the --output_prefix
// prefix, as the file sinks will write them (WriteLines): through Beam's
// filesystems, a file created (with its directory, on a local disk),
// written, closed and removed. Without it, a prefix that cannot be written
// fails the job when its first file is written, which for a bounded input
// is after every call was made. Workers that run elsewhere write with their
// own disks and credentials: for them only the prefix's scheme is checked.
func checkOutput(ctx context.Context, prefix string, workers runners.Workers) error {
	if workers == runners.WorkersRemote && !strings.Contains(prefix, "://") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	fs, err := filesystem.New(ctx, prefix)
	if err != nil {
		return fmt.Errorf("--output_prefix: %v", err)
	}
	defer fs.Close()
	if workers == runners.WorkersRemote {
		return nil
	}
	if err := writeProbe(ctx, fs, prefix); err != nil {
		return fmt.Errorf("--output_prefix: cannot write under %q: %v", prefix, err)
	}
	return nil
}

// writeProbe creates, writes, closes and removes a small file under prefix
// in fs.
func writeProbe(ctx context.Context, fs filesystem.Interface, prefix string) error {
	name := prefix + "write-check-" + uuid.NewString() + ".tmp"
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "beamthrottle: a file to check that --output_prefix can be written; it is removed at once\n")
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if rm, ok := fs.(filesystem.Remover); ok {
		if rerr := rm.Remove(ctx, name); err == nil && rerr != nil {
			err = fmt.Errorf("remove %s: %w", name, rerr)
		}
	}
	return err
}

// checkQuota checks, for a quota in Redis, that the jobs already on
// --quota_key keep the same --quota_rate and --quota_burst
// (throttle.QuotaConfig.Check): a job that would mix its rate with theirs is
// refused. A service that cannot be asked is a warning: the quota then
// fails open or closed as --quota_fail says.
func (o Options) checkQuota(ctx context.Context, warn io.Writer) error {
	q, err := o.quota()
	if err != nil {
		return nil // Validate reported it
	}
	err = q.Check(ctx)
	if _, ok := errors.AsType[*throttle.OptionError](err); ok {
		return flagErrors(err)
	}
	if err != nil {
		fmt.Fprintf(warn, "warning: --quota_address: could not check the rate of --quota_key %q at start: %v\n", q.Key, err)
	}
	return nil
}
