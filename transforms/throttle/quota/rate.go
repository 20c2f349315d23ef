package quota

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rate is a number of permits per period, such as 600 a minute: the
// configured size of a shared [Quota]. The zero value is not a valid rate.
type Rate struct {
	N   int           // permits per period, positive
	Per time.Duration // the period, positive
}

// ParseRate parses a rate written as N/unit, where N is a positive decimal
// integer and unit is s, m or h (a second, a minute, an hour) or a Go
// duration such as 10s: "600/m", "10/s", "36000/h", "5/2s". It returns an
// error beginning "quota: rate" for anything else.
func ParseRate(s string) (Rate, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("quota: rate %q is not of the form N/unit, such as 600/m", s)
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || num[0] == '+' {
		return Rate{}, fmt.Errorf("quota: rate %q: the number of permits must be a positive integer", s)
	}
	var per time.Duration
	switch unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	default:
		d, err := time.ParseDuration(unit)
		if err != nil || d <= 0 {
			return Rate{}, fmt.Errorf("quota: rate %q: the unit must be s, m, h or a positive duration such as 10s", s)
		}
		per = d
	}
	return Rate{N: n, Per: per}, nil
}

// Validate returns an error beginning "quota: rate" unless N and Per are
// positive.
func (r Rate) Validate() error {
	if r.N <= 0 || r.Per <= 0 {
		return fmt.Errorf("quota: rate %v: N and Per must be positive", r)
	}
	return nil
}

// PerSecond returns the rate in permits per second.
func (r Rate) PerSecond() float64 {
	return float64(r.N) / r.Per.Seconds()
}

// String formats r as ParseRate reads it: "600/m", "10/s", "36000/h", or
// "5/2s" for other periods.
func (r Rate) String() string {
	unit := r.Per.String()
	switch r.Per {
	case time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	}
	return strconv.Itoa(r.N) + "/" + unit
}
