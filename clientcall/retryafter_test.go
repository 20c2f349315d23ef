package clientcall_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 10, 21, 7, 28, 0, 0, time.UTC)
	tests := []struct {
		name   string
		v      string
		want   time.Duration
		wantOK bool
	}{
		{"seconds", "120", 2 * time.Minute, true},
		{"zero seconds", "0", 0, true},
		{"spaces", "  7 ", 7 * time.Second, true},
		{"leading zeros", "007", 7 * time.Second, true},
		{"date", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"date hours ahead", "Tue, 21 Oct 2025 09:30:00 GMT", 2*time.Hour + 2*time.Minute, true},
		{"RFC 850 date", "Tuesday, 21-Oct-25 07:29:00 GMT", time.Minute, true},
		{"ANSI C date", "Tue Oct 21 07:28:30 2025", 30 * time.Second, true},
		{"date now", now.Format(http.TimeFormat), 0, true},
		{"past date", now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"empty", "", 0, false},
		{"blank", "   ", 0, false},
		{"negative", "-5", 0, false},
		{"plus sign", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"unit", "5s", 0, false},
		{"garbage", "soon", 0, false},
		{"bad date", "Tue, 32 Oct 2025 07:28:00 GMT", 0, false},
		{"overflow", "99999999999999999999", 0, false},
		{"too large for Duration", "9223372037", 0, false},
		{"largest", "9223372036", 9223372036 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := clientcall.ParseRetryAfter(tt.v, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", "-1", "1.5", "", "Wed, 21 Oct 2015 07:28:00 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Fri, 31 Dec 9999 23:59:59 GMT", "99999999999999999999"} {
		f.Add(s, int64(1761031680))
	}
	f.Fuzz(func(t *testing.T, v string, unix int64) {
		d, ok := clientcall.ParseRetryAfter(v, time.Unix(unix, 0))
		if d < 0 {
			t.Errorf("ParseRetryAfter(%q) = %v, want >= 0", v, d)
		}
		if !ok && d != 0 {
			t.Errorf("ParseRetryAfter(%q) = %v, false; want 0 when not ok", v, d)
		}
	})
}
