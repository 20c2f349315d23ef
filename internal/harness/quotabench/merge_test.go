package quotabench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(24 * time.Hour)
	prev := Header{Command: "make quotabench", When: t1}
	// row is a result of scenario name, measured by the run of command at
	// when ("" for the run its header describes), with marker elements.
	row := func(name string, elements int, command string, when time.Time) Result {
		return Result{Scenario: Scenario{Name: name}, Elements: elements, Command: command, When: when}
	}
	tests := []struct {
		name       string
		old, fresh []Result
		want       []Result
	}{{
		name:  "fresh rows replace old ones, the others are kept and say their run",
		old:   []Result{row("none", 1, "", time.Time{}), row("redis", 1, "", time.Time{}), row("strict-redis", 1, "", time.Time{})},
		fresh: []Result{row("redis", 2, "", time.Time{})},
		want: []Result{row("none", 1, "make quotabench", t1), row("redis", 2, "", time.Time{}),
			row("strict-redis", 1, "make quotabench", t1)},
	}, {
		name:  "a row that says its run keeps it",
		old:   []Result{row("none", 1, "go run ./cmd/quotabench -out /tmp/q", t0), row("redis", 1, "", time.Time{})},
		fresh: []Result{row("priority-shares", 2, "", time.Time{})},
		want: []Result{row("none", 1, "go run ./cmd/quotabench -out /tmp/q", t0), row("redis", 1, "make quotabench", t1),
			row("priority-shares", 2, "", time.Time{})},
	}, {
		name:  "in the order of Scenarios, without scenarios that are gone",
		old:   []Result{row("priority-no-share", 1, "", time.Time{}), row("gone", 1, "", time.Time{})},
		fresh: []Result{row("priority-shares", 2, "", time.Time{}), row("none", 2, "", time.Time{})},
		want: []Result{row("none", 2, "", time.Time{}), row("priority-shares", 2, "", time.Time{}),
			row("priority-no-share", 1, "make quotabench", t1)},
	}, {
		name:  "nothing kept",
		fresh: []Result{row("redis", 2, "", time.Time{})},
		want:  []Result{row("redis", 2, "", time.Time{})},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Merge(prev, tt.old, tt.fresh)); diff != "" {
				t.Errorf("Merge (-want +got):\n%s", diff)
			}
		})
	}
}
