package main

import "testing"

func TestCommandOf(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-out", "docs/quota"}, "make quotabench"},
		{[]string{"-out", "docs/quota", "-scenarios", ""}, "make quotabench"},
		{[]string{"-out", "docs/quota", "-scenarios", "priority-shares,priority-no-share"},
			"make quotabench QUOTA_SCENARIOS=priority-shares,priority-no-share"},
		{[]string{"-out", "/tmp/q", "-scenarios", "strict"}, "go run ./cmd/quotabench -out /tmp/q -scenarios strict"},
		{[]string{"-out", "docs/quota", "-duration", "20s"}, "go run ./cmd/quotabench -out docs/quota -duration 20s"},
	}
	for _, tt := range tests {
		if got := commandOf(tt.args); got != tt.want {
			t.Errorf("commandOf(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
