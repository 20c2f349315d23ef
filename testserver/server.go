package testserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Server is a Handler listening on a loopback port, like
// net/http/httptest.Server. Make one with NewServer (tests) or Listen
// (binaries) and Close it when done.
type Server struct {
	// URL is the base URL of the server, e.g. http://127.0.0.1:41234,
	// with no trailing slash.
	URL string
	// Handler serves the requests; use it to change the quota and faults
	// or read the stats.
	Handler *Handler

	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed when Serve returns
}

// NewServer starts a Server for cfg on 127.0.0.1 on a free port.
func NewServer(cfg Config) (*Server, error) {
	return Listen("127.0.0.1:0", cfg)
}

// Listen starts a Server for cfg on the TCP address addr, such as
// "127.0.0.1:8500"; "" means "127.0.0.1:0". If addr has no host or an
// unspecified one, URL uses 127.0.0.1. At most cfg.MaxConns
// connections are served at once; more wait to be accepted.
func Listen(addr string, cfg Config) (*Server, error) {
	h, err := NewHandler(cfg)
	if err != nil {
		return nil, err
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:     baseURL(ln.Addr()),
		Handler: h,
		ln:      netutil.LimitListener(ln, h.cfg.MaxConns),
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       30 * time.Second,
			ErrorLog:          slog.NewLogLogger(h.cfg.Logger.Handler(), slog.LevelDebug),
		},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.cfg.Logger.Error("serve", "err", err)
		}
	}()
	h.cfg.Logger.Info("listening", "url", s.URL, "quota", h.cfg.Quota, "period", h.cfg.Period, "mode", h.cfg.Mode)
	return s, nil
}

// baseURL is the URL for a listener address, with an unspecified host
// (0.0.0.0 or ::) replaced by 127.0.0.1 so that the URL can be dialled.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Endpoint returns the URL of the quota'd API, s.URL + "/api".
func (s *Server) Endpoint() string {
	return s.URL + "/api"
}

// Close stops accepting connections, closes idle ones and waits for
// requests in flight to be answered. It is safe to call more than once.
func (s *Server) Close() {
	s.Shutdown(context.Background())
}

// Shutdown is Close with a deadline: if ctx is done before the requests in
// flight are answered, it closes their connections and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	<-s.done
	return err
}
