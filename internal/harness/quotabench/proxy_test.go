package quotabench

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestDelayProxy checks that the proxy forwards bytes both ways, in order,
// and counts the chunks. It asserts nothing about time.
func TestDelayProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // an echo server, line by line
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			c.Write([]byte("echo " + line))
		}
	}()
	p, err := startDelayProxy(ln.Addr().String(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, msg := range []string{"one\n", "two\n", "three\n"} {
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := "echo " + msg; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if got := p.Chunks(); got < 6 {
		t.Errorf("Chunks = %d, want at least 6 (3 each way)", got)
	}
}
