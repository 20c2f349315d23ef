package quotabench

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// delayProxy forwards TCP connections from a loopback port to a target,
// holding each chunk of bytes for delay before passing it on, in both
// directions, and keeping the order of the chunks: a service that answers
// late. Close stops it and its connections.
type delayProxy struct {
	// Addr is the proxy's host:port.
	Addr string

	target string
	delay  time.Duration
	ln     net.Listener
	chunks atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// startDelayProxy listens on a free loopback port and forwards to target
// with the delay.
func startDelayProxy(target string, delay time.Duration) (*delayProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &delayProxy{Addr: ln.Addr().String(), target: target, delay: delay, ln: ln, conns: map[net.Conn]bool{}}
	p.wg.Go(p.serve)
	return p, nil
}

// Chunks counts the chunks forwarded so far, both ways.
func (p *delayProxy) Chunks() int64 { return p.chunks.Load() }

func (p *delayProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		t, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, t) {
			return
		}
		p.wg.Go(func() { p.pipe(t, c) })
		p.wg.Go(func() { p.pipe(c, t) })
	}
}

// track registers the connections for Close; false if closed already.
func (p *delayProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

// chunk is bytes read at a time.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies from src to dst, each chunk delay after it was read. When
// src ends, dst is closed for writing; when dst fails, both are closed.
func (p *delayProxy) pipe(dst, src net.Conn) {
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at.Add(p.delay)))
		p.chunks.Add(1)
		if _, err := dst.Write(c.b); err != nil {
			src.Close() // ends the reader
			dst.Close()
			break
		}
	}
	for range q { // wait for the reader
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// Close stops accepting, closes every connection and waits for the
// forwarding goroutines.
func (p *delayProxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
