package services

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Redis is a redis-server started by [StartRedis] for one test.
type Redis struct {
	// Addr is the server's host:port on the loopback interface. It stays the
	// same across Kill and Restart.
	Addr string

	p *process
}

// StartRedis starts Debian's redis-server on a free loopback port, without
// persistence (--save "" --appendonly no), waits until it answers PING and
// stops it when t ends. It fails t if redis-server is not installed or does
// not start.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	r, err := TryStartRedis(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r.p.cleanup(t)
	return r
}

// TryStartRedis is StartRedis for programs that are not tests, such as
// benchmarks: it keeps its files in dir, returns an error instead of
// failing a test, and leaves the server running until Kill, which the
// caller must call when done.
func TryStartRedis(dir string) (*Redis, error) {
	path, err := lookPath("redis-server", "redis-server")
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := range 3 { // a port found free may be taken before redis binds it
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		port := strconv.Itoa(ports[0])
		r := &Redis{
			Addr: net.JoinHostPort("127.0.0.1", port),
			p: &process{
				name: "redis-server",
				path: path,
				args: []string{
					"--port", port, "--bind", "127.0.0.1",
					"--save", "", "--appendonly", "no",
					"--dir", dir, "--daemonize", "no",
				},
				log: filepath.Join(dir, fmt.Sprintf("redis-%d.log", attempt)),
			},
		}
		if last = r.start(); last == nil {
			return r, nil
		}
	}
	return nil, last
}

func (r *Redis) start() error {
	if err := r.p.start(); err != nil {
		return err
	}
	if err := r.p.waitReady(r.ping); err != nil {
		r.p.stop()
		return err
	}
	return nil
}

// ping sends PING and expects PONG.
func (r *Redis) ping() error {
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Pause makes the server hang for its clients' scripts and writes (CLIENT
// PAUSE ... WRITE) until Unpause: it still accepts connections and answers
// reads, but holds every EVAL, EVALSHA (a GCRA's included) and write
// without an answer, as a server busy with a slow command does. (ALL would
// hold Unpause's command too.)
func (r *Redis) Pause(t testing.TB) {
	t.Helper()
	if err := r.command("CLIENT PAUSE 3600000 WRITE"); err != nil {
		t.Fatal(err)
	}
}

// Unpause makes a paused server answer again, the commands it held first.
func (r *Redis) Unpause(t testing.TB) {
	t.Helper()
	if err := r.command("CLIENT UNPAUSE"); err != nil {
		t.Fatal(err)
	}
}

// command sends an inline command, on a connection of its own, and
// expects +OK.
func (r *Redis) command(cmd string) error {
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("redis %s: %w", cmd, err)
	}
	if strings.TrimSpace(line) != "+OK" {
		return fmt.Errorf("redis %s: answered %q", cmd, line)
	}
	return nil
}

// Kill stops the server at once (SIGKILL): its data is lost, as after a
// crash. Clients see refused connections until Restart.
func (r *Redis) Kill() { r.p.stop() }

// Restart starts the server again on the same address, empty, and waits
// until it answers PING. It kills the server first if it is running.
func (r *Redis) Restart(t testing.TB) {
	t.Helper()
	if err := r.TryRestart(); err != nil {
		t.Fatal(err)
	}
}

// TryRestart is Restart returning its error, for programs that are not
// tests.
func (r *Redis) TryRestart() error {
	r.p.stop()
	return r.start()
}
