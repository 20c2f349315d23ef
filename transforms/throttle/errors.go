package throttle

import (
	"errors"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// An OptionError reports an option of Adaptive whose value cannot be used,
// so that a caller can say which of its own settings is at fault (the
// pipeline's flags do). It is the one error type of the package: every
// fault of the options that ValidateOptions and TryAdaptive report is an
// *OptionError, for errors.As, the algorithm's settings (WithSRE,
// WithMode) included.
type OptionError struct {
	Option string // the option at fault: "WithBatchSize", "WithQuota", ...
	// Field is, for an option taking a struct (WithQuota, WithSRE), the
	// field at fault, such as "Rate"; else "".
	Field string
	Err   error // what is wrong
}

// Error returns "throttle: Option: what is wrong", or with a Field
// "throttle: Option: Field: what is wrong".
func (e *OptionError) Error() string {
	msg := "throttle: " + e.Option + ": "
	if e.Field != "" {
		msg += e.Field + ": "
	}
	return msg + e.Err.Error()
}

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// optionErrors turns the faults of adaptive.SREConfig.Validate in err (joined
// with errors.Join or not) into OptionErrors naming the option that set
// the field at fault, so that one error type leaves the package.
func optionErrors(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, optionErrors(e))
		}
		return errors.Join(errs...)
	}
	ce, ok := errors.AsType[*adaptive.ConfigError](err)
	if !ok {
		return err
	}
	return &OptionError{Option: "WithSRE", Field: ce.Field, Err: ce.Err}
}
