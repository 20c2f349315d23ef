package adaptive_test

import (
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    adaptive.Rate
		wantErr bool
	}{
		{"600/m", adaptive.Rate{N: 600, Per: time.Minute}, false},
		{"10/s", adaptive.Rate{N: 10, Per: time.Second}, false},
		{"36000/h", adaptive.Rate{N: 36000, Per: time.Hour}, false},
		{"1/h", adaptive.Rate{N: 1, Per: time.Hour}, false},
		{" 600/m\n", adaptive.Rate{N: 600, Per: time.Minute}, false},
		{"5/2s", adaptive.Rate{N: 5, Per: 2 * time.Second}, false},
		{"100/1m", adaptive.Rate{N: 100, Per: time.Minute}, false},
		{"100/500ms", adaptive.Rate{N: 100, Per: 500 * time.Millisecond}, false},
		{"", adaptive.Rate{}, true},
		{"600", adaptive.Rate{}, true},
		{"600/", adaptive.Rate{}, true},
		{"/m", adaptive.Rate{}, true},
		{"0/m", adaptive.Rate{}, true},
		{"-5/s", adaptive.Rate{}, true},
		{"+5/s", adaptive.Rate{}, true},
		{"1.5/s", adaptive.Rate{}, true},
		{"1e3/s", adaptive.Rate{}, true},
		{"600 /m", adaptive.Rate{}, true},
		{"600/ m", adaptive.Rate{}, true},
		{"600/M", adaptive.Rate{}, true},
		{"600/min", adaptive.Rate{}, true},
		{"600/d", adaptive.Rate{}, true},
		{"600/0s", adaptive.Rate{}, true},
		{"600/-1m", adaptive.Rate{}, true},
		{"600/m/s", adaptive.Rate{}, true},
		{"99999999999999999999/s", adaptive.Rate{}, true},
	}
	for _, tc := range tests {
		got, err := adaptive.ParseRate(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "adaptive: rate ") {
			t.Errorf("ParseRate(%q) error %q, want it to begin with %q", tc.in, err, "adaptive: rate ")
		}
	}
}

func TestRateString(t *testing.T) {
	tests := []struct {
		r    adaptive.Rate
		want string
	}{
		{adaptive.Rate{N: 600, Per: time.Minute}, "600/m"},
		{adaptive.Rate{N: 10, Per: time.Second}, "10/s"},
		{adaptive.Rate{N: 36000, Per: time.Hour}, "36000/h"},
		{adaptive.Rate{N: 5, Per: 2 * time.Second}, "5/2s"},
		{adaptive.Rate{N: 100, Per: 500 * time.Millisecond}, "100/500ms"},
	}
	for _, tc := range tests {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.r, got, tc.want)
		}
		back, err := adaptive.ParseRate(tc.want)
		if back != tc.r || err != nil {
			t.Errorf("ParseRate(%q) = %v, %v; want %#v, nil", tc.want, back, err, tc.r)
		}
	}
}

func TestRateValidatePerSecond(t *testing.T) {
	tests := []struct {
		r       adaptive.Rate
		perSec  float64
		wantErr bool
	}{
		{adaptive.Rate{N: 600, Per: time.Minute}, 10, false},
		{adaptive.Rate{N: 36000, Per: time.Hour}, 10, false},
		{adaptive.Rate{N: 5, Per: 2 * time.Second}, 2.5, false},
		{adaptive.Rate{}, 0, true},
		{adaptive.Rate{N: 10}, 0, true},
		{adaptive.Rate{Per: time.Second}, 0, true},
		{adaptive.Rate{N: -1, Per: time.Second}, 0, true},
		{adaptive.Rate{N: 1, Per: -time.Second}, 0, true},
	}
	for _, tc := range tests {
		err := tc.r.Validate()
		if (err != nil) != tc.wantErr {
			t.Errorf("%#v.Validate() = %v, want error %v", tc.r, err, tc.wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "adaptive: rate ") {
			t.Errorf("%#v.Validate() = %q, want it to begin with %q", tc.r, err, "adaptive: rate ")
		}
		if err == nil && tc.r.PerSecond() != tc.perSec {
			t.Errorf("%#v.PerSecond() = %v, want %v", tc.r, tc.r.PerSecond(), tc.perSec)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"600/m", "10/s", "36000/h", "5/2s", "", "/", "0/m", "1/1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := adaptive.ParseRate(s)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("ParseRate(%q) = %#v, which does not validate: %v", s, r, err)
		}
		back, err := adaptive.ParseRate(r.String())
		if back != r || err != nil {
			t.Fatalf("ParseRate(%q) = %#v; ParseRate(%q) = %#v, %v", s, r, r.String(), back, err)
		}
	})
}
