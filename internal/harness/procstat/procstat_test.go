package procstat

import (
	"runtime"
	"testing"
)

func TestParseHWM(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     float64
	}{
		{"linux", "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n", 2},
		{"missing", "Name:\tx\nVmRSS:\t 1024 kB\n", 0},
		{"garbage", "VmHWM:\tlots\n", 0},
		{"empty", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseHWM(tc.in); got != tc.want {
				t.Errorf("parseHWM: got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPeakRSSMB(t *testing.T) {
	got := PeakRSSMB()
	if runtime.GOOS != "linux" {
		if got != 0 {
			t.Errorf("PeakRSSMB on %s: got %v, want 0", runtime.GOOS, got)
		}
		return
	}
	if got <= 0 {
		t.Errorf("PeakRSSMB: got %v, want > 0 on Linux", got)
	}
}
