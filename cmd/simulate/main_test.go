package main

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		format string
		sweep  int
		want   string // prefix of the error, "" for none
	}{
		{"svg", 0, ""},
		{"png", 20, ""},
		{"gif", 0, "--format: "},
		{"svg", -1, "--sweep: "},
	}
	for _, tc := range tests {
		err := check(tc.format, tc.sweep)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("check(%q, %d) = %v, want nil", tc.format, tc.sweep, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("check(%q, %d) = %v, want an error beginning %q", tc.format, tc.sweep, err, tc.want)
		}
	}
}
