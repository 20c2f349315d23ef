package services

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Silent is a server that accepts TCP connections on loopback and never
// answers: it reads what clients send and drops it, as a hung service
// behind a live socket does (Redis under DEBUG SLEEP, a stuck process).
// Clients see their connections accepted and then time out.
type Silent struct {
	// Addr is the server's host:port on the loopback interface.
	Addr string

	ln       net.Listener
	accepted atomic.Int64
	wg       sync.WaitGroup

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

// StartSilent starts a Silent server on a free loopback port and closes it
// when t ends.
func StartSilent(t testing.TB) *Silent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Silent{Addr: ln.Addr().String(), ln: ln}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

func (s *Silent) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			io.Copy(io.Discard, c)
		}()
	}
}

// Accepted returns the number of connections accepted so far.
func (s *Silent) Accepted() int64 { return s.accepted.Load() }

// Close stops accepting, closes every connection and waits for them.
func (s *Silent) Close() {
	s.ln.Close()
	s.mu.Lock()
	s.closed = true
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
