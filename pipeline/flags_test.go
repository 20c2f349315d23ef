package pipeline

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// TestThrottleFlagsDefined: every flag throttleFlags names is a flag of
// RegisterFlags.
func TestThrottleFlagsDefined(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	RegisterFlags(fs)
	for setting, name := range throttleFlags {
		if fs.Lookup(name) == nil {
			t.Errorf("throttleFlags maps %s to --%s, which RegisterFlags does not define", setting, name)
		}
	}
}

// TestURLFlagErrors: a --url that is refused is not quoted back, since
// its user info and query may hold credentials.
func TestURLFlagErrors(t *testing.T) {
	const secret = "planted-url-secret-5d0a"
	for _, tc := range []struct{ url, want string }{
		{"ftp://user:" + secret + "@h/x?token=" + secret, `--url: want an http:// or https:// URL, got scheme "ftp"`},
		{"http://user:" + secret + "@h/%zz?token=" + secret, `--url: not a valid URL: invalid URL escape "%zz"`},
		{"https:///x?token=" + secret, "--url: want an http:// or https:// URL with a host"},
		{"https://user:" + secret + "@h/x?token=" + secret, ""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			o := RegisterFlags(fs)
			if err := fs.Parse([]string{"--generate=10", "--output_prefix=o/", "--url=" + tc.url}); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestThrottleFlagErrors: a throttle setting is checked by the throttle
// layer alone, and Validate names the flag at fault, for every fault at
// once.
func TestThrottleFlagErrors(t *testing.T) {
	base := []string{"--generate=10", "--url=http://x", "--output_prefix=o/"}
	tests := []struct {
		args []string
		want []string // each a line of the error, in order
	}{
		{nil, nil},
		{[]string{"--k=0"}, nil}, // zero K is adaptive's default
		{[]string{"--groups=0"}, []string{"--groups: must be >= 1, got 0"}},
		{[]string{"--batch_interval=0s"}, []string{"--batch_interval: must be > 0, got 0s"}},
		{[]string{"--k=NaN"}, []string{"--k: must be positive and finite, got NaN"}},
		{[]string{"--throttle_mode=fast"}, []string{`--throttle_mode: must be sre or paced, got "fast"`}},
		{[]string{"--throttle_mode=SRE"}, nil},
		{[]string{"--window=weekly"}, []string{`--window: must be fixed or sliding, got "weekly"`}},
		{[]string{"--window=sliding", "--window_size=1s", "--bucket=2s"}, []string{"--bucket: 2s must not exceed WindowSize 1s"}},
		{[]string{"--window=fixed", "--window_size=1s", "--bucket=2s"}, nil}, // the sliding window's settings are ignored
		{[]string{"--reset_interval=-1s"}, []string{"--reset_interval: must not be negative, got -1s"}},
		{[]string{"--strategy=sometimes"}, []string{`--strategy: unknown strategy "sometimes" (want route, drop, retry or postpone)`}},
		{[]string{"--throttle_scope=process"}, []string{`--throttle_scope: unknown scope "process" (want worker or group)`}},
		{[]string{"--max_buffered=-1", "--calls_in_flight=-1", "--max_age=0s"},
			[]string{"--max_age: must be > 0, got 0s", "--calls_in_flight: must be >= 0 (0 sizes it to the pace), got -1", "--max_buffered: must be >= 0, got -1"}},
		{[]string{"--quota_backend=redis", "--quota_address=h:1", "--quota_rate=10/s", "--quota_burst=-1", "--quota_timeout=-1s"},
			[]string{"--quota_burst: must be >= 0, got -1", "--quota_timeout: must be >= 0, got -1s"}},
		{[]string{"--quota_backend=envoy", "--quota_address=h:1"}, []string{"--quota_domain: required with the envoy backend"}},
		{[]string{"--quota_fail=maybe"}, []string{`--quota_fail: want open or closed, got "maybe"`}},
		{[]string{"--items_per_call=50", "--bytes_per_call=65536", "--cost=json:tokens", "--item_status_field=status"}, nil},
		{[]string{"--items_per_call=0"}, nil}, // zero is the transform's default, 1
		{[]string{"--items_per_call=-1", "--bytes_per_call=-1"},
			[]string{"--items_per_call: must be in [1, 100000], got -1", "--bytes_per_call: must be >= 0, got -1"}},
		{[]string{"--cost=tokens"}, []string{`--cost: want 1, bytes, call or json:FIELD, got "tokens"`}},
		{[]string{"--cost=json:"}, []string{`--cost: want 1, bytes, call or json:FIELD, got "json:"`}},
		{[]string{"--cost=bytes"}, nil},
		{[]string{"--cost=call"}, nil},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			o := RegisterFlags(fs)
			if err := fs.Parse(append(slices.Clone(base), tc.args...)); err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := o.Validate(); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got errors %q, want %q", got, tc.want)
			}
		})
	}
}

// TestThrottleOptionsBuild: Build refuses what Validate refuses, with the
// same flag named: the rules are the throttle layer's, checked once.
func TestThrottleOptionsBuild(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	o := RegisterFlags(fs)
	if err := fs.Parse([]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--batch_size=0"}); err != nil {
		t.Fatal(err)
	}
	_, s := beam.NewPipelineWithRoot()
	if _, err := Build(s, *o); err == nil || err.Error() != "--batch_size: must be >= 1, got 0" {
		t.Errorf("Build: got error %v, want --batch_size: must be >= 1, got 0", err)
	}
}

// TestMaxWaitFlag: --max_wait takes auto, none, or a duration; a zero
// duration means no bound however it is written.
func TestMaxWaitFlag(t *testing.T) {
	tests := []struct {
		arg     string
		want    time.Duration
		wantErr bool
	}{
		{arg: "auto", want: 0},
		{arg: "none", want: NoMaxWait},
		{arg: "0", want: NoMaxWait},
		{arg: "0s", want: NoMaxWait},
		{arg: "0ms", want: NoMaxWait},
		{arg: "90s", want: 90 * time.Second},
		{arg: "-1s", wantErr: true},
		{arg: "soon", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.arg, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o := RegisterFlags(fs)
			err := fs.Parse([]string{"--max_wait=" + tc.arg})
			switch {
			case tc.wantErr && err == nil:
				t.Fatalf("got MaxWait %v, want an error", o.MaxWait)
			case !tc.wantErr && err != nil:
				t.Fatalf("got error %v, want MaxWait %v", err, tc.want)
			case !tc.wantErr && o.MaxWait != tc.want:
				t.Errorf("got MaxWait %v, want %v", o.MaxWait, tc.want)
			}
		})
	}
}
