package quota_test

import (
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    quota.Rate
		wantErr bool
	}{
		{"600/m", quota.Rate{N: 600, Per: time.Minute}, false},
		{"10/s", quota.Rate{N: 10, Per: time.Second}, false},
		{"36000/h", quota.Rate{N: 36000, Per: time.Hour}, false},
		{"1/h", quota.Rate{N: 1, Per: time.Hour}, false},
		{" 600/m\n", quota.Rate{N: 600, Per: time.Minute}, false},
		{"5/2s", quota.Rate{N: 5, Per: 2 * time.Second}, false},
		{"100/1m", quota.Rate{N: 100, Per: time.Minute}, false},
		{"100/500ms", quota.Rate{N: 100, Per: 500 * time.Millisecond}, false},
		{"", quota.Rate{}, true},
		{"600", quota.Rate{}, true},
		{"600/", quota.Rate{}, true},
		{"/m", quota.Rate{}, true},
		{"0/m", quota.Rate{}, true},
		{"-5/s", quota.Rate{}, true},
		{"+5/s", quota.Rate{}, true},
		{"1.5/s", quota.Rate{}, true},
		{"1e3/s", quota.Rate{}, true},
		{"600 /m", quota.Rate{}, true},
		{"600/ m", quota.Rate{}, true},
		{"600/M", quota.Rate{}, true},
		{"600/min", quota.Rate{}, true},
		{"600/d", quota.Rate{}, true},
		{"600/0s", quota.Rate{}, true},
		{"600/-1m", quota.Rate{}, true},
		{"600/m/s", quota.Rate{}, true},
		{"99999999999999999999/s", quota.Rate{}, true},
	}
	for _, tc := range tests {
		got, err := quota.ParseRate(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "quota: rate ") {
			t.Errorf("ParseRate(%q) error %q, want it to begin with %q", tc.in, err, "quota: rate ")
		}
	}
}

func TestRateString(t *testing.T) {
	tests := []struct {
		r    quota.Rate
		want string
	}{
		{quota.Rate{N: 600, Per: time.Minute}, "600/m"},
		{quota.Rate{N: 10, Per: time.Second}, "10/s"},
		{quota.Rate{N: 36000, Per: time.Hour}, "36000/h"},
		{quota.Rate{N: 5, Per: 2 * time.Second}, "5/2s"},
		{quota.Rate{N: 100, Per: 500 * time.Millisecond}, "100/500ms"},
	}
	for _, tc := range tests {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.r, got, tc.want)
		}
		back, err := quota.ParseRate(tc.want)
		if back != tc.r || err != nil {
			t.Errorf("ParseRate(%q) = %v, %v; want %#v, nil", tc.want, back, err, tc.r)
		}
	}
}

func TestRateValidatePerSecond(t *testing.T) {
	tests := []struct {
		r       quota.Rate
		perSec  float64
		wantErr bool
	}{
		{quota.Rate{N: 600, Per: time.Minute}, 10, false},
		{quota.Rate{N: 36000, Per: time.Hour}, 10, false},
		{quota.Rate{N: 5, Per: 2 * time.Second}, 2.5, false},
		{quota.Rate{}, 0, true},
		{quota.Rate{N: 10}, 0, true},
		{quota.Rate{Per: time.Second}, 0, true},
		{quota.Rate{N: -1, Per: time.Second}, 0, true},
		{quota.Rate{N: 1, Per: -time.Second}, 0, true},
	}
	for _, tc := range tests {
		err := tc.r.Validate()
		if (err != nil) != tc.wantErr {
			t.Errorf("%#v.Validate() = %v, want error %v", tc.r, err, tc.wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "quota: rate ") {
			t.Errorf("%#v.Validate() = %q, want it to begin with %q", tc.r, err, "quota: rate ")
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
		r, err := quota.ParseRate(s)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("ParseRate(%q) = %#v, which does not validate: %v", s, r, err)
		}
		back, err := quota.ParseRate(r.String())
		if back != r || err != nil {
			t.Fatalf("ParseRate(%q) = %#v; ParseRate(%q) = %#v, %v", s, r, r.String(), back, err)
		}
	})
}
