package throttle

import (
	"errors"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
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

// optionErrors turns the faults of adaptive.SREConfig.Validate and of a
// quota backend's settings in err (joined with errors.Join or not) into
// OptionErrors naming the option and field that set the one at fault, so
// that one error type leaves the package; other errors are kept.
func optionErrors(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, optionErrors(e))
		}
		return errors.Join(errs...)
	}
	if ce, ok := errors.AsType[*adaptive.ConfigError](err); ok {
		return &OptionError{Option: "WithSRE", Field: ce.Field, Err: ce.Err}
	}
	if ce, ok := errors.AsType[*quota.ConfigError](err); ok {
		return &OptionError{Option: "WithQuota", Field: quotaField(ce.Field), Err: ce.Err}
	}
	return err
}

// quotaField returns the QuotaConfig field that sets field of
// quota.Settings: the same name, but for Envoy's parameters, set by
// fields of their own.
func quotaField(field string) string {
	switch field {
	case "Params.domain":
		return "Domain"
	case "Params.descriptors":
		return "Descriptors"
	}
	return field
}
