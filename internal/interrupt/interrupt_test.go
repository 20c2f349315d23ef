package interrupt

import "testing"

// TestBegin: an interrupt lasts until each Begin has ended, once; Done is
// closed while it lasts.
func TestBegin(t *testing.T) {
	closed := func() bool {
		select {
		case <-Done():
			return true
		default:
			return false
		}
	}
	if Is() || closed() {
		t.Fatal("interrupted before any Begin")
	}
	end1 := Begin()
	end2 := Begin()
	var end3 func()
	for i, step := range []struct {
		do   func()
		want bool
	}{
		{func() {}, true},
		{end1, true},
		{end1, true}, // a second end of the same Begin counts nothing
		{end2, false},
		{func() { end3 = Begin() }, true}, // a new interrupt after the first ended
		{func() { end3() }, false},
	} {
		step.do()
		if got := Is(); got != step.want {
			t.Errorf("step %d: Is() = %v, want %v", i, got, step.want)
		}
		if got := closed(); got != step.want {
			t.Errorf("step %d: Done closed = %v, want %v", i, got, step.want)
		}
	}
}
