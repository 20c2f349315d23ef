package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/beamthrottle/beamthrottle/internal/harness/procstat"
)

// TestRunListensOnLoopbackOnly runs the binary on its default runner, the
// embedded Prism, and looks at the TCP sockets the process listens on while
// the pipeline runs: Prism's job server (which also serves the workers'
// control, data, state and logging connections) and the loopback worker
// pool. Every one must listen on a loopback address, none on every
// interface. The run must also leave nothing behind in the temporary
// directory (Beam's loopback mode creates a placeholder worker file there).
func TestRunListensOnLoopbackOnly(t *testing.T) {
	bin := buildBinary(t)
	const n = 20
	called, looked := make(chan struct{}), make(chan struct{})
	var once sync.Once
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(called) })
		<-looked // hold the calls until the test has seen the sockets
		io.Copy(w, r.Body)
	}))
	defer backend.Close()

	tmp, out := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, "--generate="+strconv.Itoa(n), "--url="+backend.URL, "--output_prefix="+out+"/",
		"--groups=1", "--batch_interval=50ms")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-called:
	case err := <-exited:
		t.Fatalf("the run ended before its first call: %v\n%s", err, tail(output.Bytes()))
	}
	addrs, err := procstat.Listening(cmd.Process.Pid)
	close(looked)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("run: %v\n%s", err, tail(output.Bytes()))
	}

	// The job server and the worker pool at least.
	if len(addrs) < 2 {
		t.Errorf("the run listened on %v; want at least Prism's job server and the worker pool", addrs)
	}
	for _, a := range addrs {
		if !a.Addr().IsLoopback() {
			t.Errorf("the run listened on %v: want loopback addresses only", a)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("the run left %q in its temporary directory; want nothing", left)
	}
	lines, _ := filepath.Glob(filepath.Join(out, "success-*.jsonl"))
	got := 0
	for _, f := range lines {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got += strings.Count(string(b), "\n")
	}
	if got != n {
		t.Errorf("%d success lines, want %d\n%s", got, n, tail(output.Bytes()))
	}
}
