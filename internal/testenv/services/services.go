// Package services starts the real servers that the shared-quota tests talk
// to, each as a child process on free loopback ports, and stops them when the
// test ends: Debian's redis-server ([StartRedis]) and Envoy's rate-limit
// service built from its Go module ([StartRateLimit]); Debian's nginx as a
// strict limiter of an API ([StartNginx]); and, in process, a
// server that accepts connections and never answers ([StartSilent]). There are no fakes: a
// test that needs a server that is missing fails, naming the install step
// (scripts/install-test-deps, which make test runs first); it never skips.
//
// Every server can be killed and restarted on the same address, for tests of
// what clients do while it is down. Programs that are not tests (benchmarks)
// use the Try variants, which return errors and leave stopping to the caller. Children get SIGKILL when the test binary
// dies (Linux), so a crashed test leaves no server behind.
package services

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long a server may take to answer after it is
// started. It is generous so that a loaded CI machine does not fail a test;
// no verdict depends on it, and a server that is ready sooner is used sooner.
const startTimeout = 30 * time.Second

// modulePath is the module line of the repository's go.mod, used to find the
// repository's root from a test's working directory.
const modulePath = "github.com/beamthrottle/beamthrottle"

// RepoRoot returns the root of the beamthrottle repository: the nearest
// directory at or above the working directory whose go.mod declares the
// beamthrottle module. Tests run in their package's directory, so it works
// from any package of the repository, with or without -trimpath.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declares(b, modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("services: no go.mod for module %s at or above the working directory", modulePath)
		}
		dir = parent
	}
}

// declares reports whether the go.mod text b declares module path.
func declares(b []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "module" && f[1] == path {
			return true
		}
	}
	return false
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment
// ago. Another process may take one before the server binds it; callers retry
// with new ports when the server fails to start.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ClosedAddr returns a loopback address ("127.0.0.1:port") on which nothing
// listens: a service that is down, for tests of a client's failures.
func ClosedAddr() (string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0]), nil
}

// process is a server child process that can be stopped and started again
// with the same command line.
type process struct {
	name string // for messages
	path string
	args []string
	env  []string // added to the test's environment
	log  string   // file collecting the child's stdout and stderr

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// start starts the process. It returns at once; see waitReady.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("services: %s is already running", p.name)
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("services: starting %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		f.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// stop kills the process, if it runs, and waits until it has exited.
func (p *process) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Kill()
	<-p.done
	p.cmd, p.done = nil, nil
}

// terminate sends the process SIGTERM, if it runs, and kills it if it has
// not exited within grace; it returns once it has exited.
func (p *process) terminate(grace time.Duration) {
	p.mu.Lock()
	if p.cmd != nil {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
			p.cmd, p.done = nil, nil
		case <-time.After(grace):
		}
	}
	p.mu.Unlock()
	p.stop()
}

// waitReady polls ready until it succeeds, the process exits or
// startTimeout passes.
func (p *process) waitReady(ready func() error) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	deadline := time.Now().Add(startTimeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("services: %s exited before it was ready (last check: %v)\n%s", p.name, err, p.tail())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("services: %s not ready after %v: %v\n%s", p.name, startTimeout, err, p.tail())
		}
	}
}

// tail returns the last lines the process wrote, for error messages.
func (p *process) tail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return p.name + " log (" + p.log + "):\n" + strings.Join(lines, "\n")
}

// cleanup stops p when t ends and, if t failed, logs the end of its log.
func (p *process) cleanup(t testing.TB) {
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Log(p.tail())
		}
	})
}

// lookPath finds a binary installed from Debian's packages, or explains how
// to install it.
func lookPath(name, pkg string) (string, error) {
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("services: %s not found in PATH: install Debian's %s package (scripts/install-test-deps, which make test runs, does it)", name, pkg)
	}
	return path, err
}
