package services

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Nginx is Debian's nginx started by [StartNginx] as a strict limiter in
// front of an API that answers at once: limit_req at Rate requests a
// second with no burst and no delay, over every request together, answering
// 429 to what it refuses. nginx counts in milliseconds of a clock it caches
// per event loop, and admits a request only once 1/Rate has passed since
// the last one it admitted: a GCRA with no burst, written by others than
// the client it measures. Each request is logged with nginx's time, the
// client's name (the X-Quota-Client header, testserver.ClientHeader) and
// the status; see [Nginx.Log].
type Nginx struct {
	// URL is the limited API's address, http://127.0.0.1:PORT/.
	URL string
	// Rate is the limit in requests a second.
	Rate int

	p   *process
	log string // the access log
}

// NginxRequest is one request as nginx logged it.
type NginxRequest struct {
	At     time.Time // when nginx handled it (its cached clock, to the millisecond)
	Client string    // the X-Quota-Client header; "" if none
	Status int       // 200 admitted, 429 refused
}

// nginxConf is the configuration: one master and two workers, as Debian's
// default (worker_processes auto on two cores), sharing the limit's zone;
// the limited server proxies what it admits to a second server that
// answers 200 with a small JSON body (limit_req runs before the content
// phase, so it limits the proxied requests; a plain return would run
// before it).
const nginxConf = `daemon off;
master_process on;
worker_processes 2;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  log_format limited '$msec $status "$http_x_quota_client"';
  limit_req_zone $server_name zone=api:1m rate=%[2]dr/s;
  server {
    listen 127.0.0.1:%[3]d;
    server_name api;
    access_log %[1]s/access.log limited;
    limit_req zone=api;
    limit_req_status 429;
    location / { proxy_pass http://127.0.0.1:%[4]d; }
  }
  server {
    listen 127.0.0.1:%[4]d;
    default_type application/json;
    location / { return 200 '{"ok":true}'; }
  }
}
`

// StartNginx starts nginx as a strict limiter of rate requests a second
// on free loopback ports, waits until it answers and stops it when t ends.
// It fails t if nginx is not installed or does not start.
func StartNginx(t testing.TB, rate int) *Nginx {
	t.Helper()
	n, err := TryStartNginx(t.TempDir(), rate)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Kill()
		if t.Failed() {
			t.Log(n.p.tail())
		}
	})
	return n
}

// TryStartNginx is StartNginx for programs that are not tests: it keeps
// its files in dir, returns an error instead of failing a test, and leaves
// nginx running until Kill.
func TryStartNginx(dir string, rate int) (*Nginx, error) {
	if rate <= 0 {
		return nil, fmt.Errorf("services: nginx: rate must be positive, got %d", rate)
	}
	path, err := lookPath("nginx", "nginx-light")
	if err != nil {
		var serr error
		if path, serr = lookPath("/usr/sbin/nginx", "nginx-light"); serr != nil {
			return nil, err
		}
	}
	var last error
	for attempt := range 3 { // a port found free may be taken before nginx binds it
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, dir, rate, ports[0], ports[1]), 0o644); err != nil {
			return nil, err
		}
		n := &Nginx{
			URL:  fmt.Sprintf("http://127.0.0.1:%d/", ports[0]),
			Rate: rate,
			log:  filepath.Join(dir, "access.log"),
			p: &process{
				name: "nginx",
				path: path,
				args: []string{"-c", conf, "-p", dir, "-e", filepath.Join(dir, "error.log")},
				log:  filepath.Join(dir, fmt.Sprintf("nginx-%d.log", attempt)),
			},
		}
		if last = n.start(ports[1]); last == nil {
			return n, nil
		}
	}
	return nil, last
}

// start starts nginx and waits until both its servers answer; the
// readiness checks go to the backend, so they use none of the limit.
func (n *Nginx) start(backend int) error {
	if err := n.p.start(); err != nil {
		return err
	}
	ready := func() error {
		for _, addr := range []string{strings.TrimSuffix(strings.TrimPrefix(n.URL, "http://"), "/"), net.JoinHostPort("127.0.0.1", strconv.Itoa(backend))} {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return err
			}
			c.Close()
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", backend))
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := n.p.waitReady(ready); err != nil {
		n.p.stop()
		return err
	}
	return nil
}

// Kill stops nginx and waits until it has exited: SIGTERM, on which the
// master stops its workers (a killed master would leave them running),
// then SIGKILL after a few seconds.
func (n *Nginx) Kill() { n.p.terminate(5 * time.Second) }

// Log returns the requests nginx logged so far, in the order it logged
// them: each worker logs a request once it has answered it, so a request
// may be logged after the next one that another worker answered.
func (n *Nginx) Log() ([]NginxRequest, error) {
	f, err := os.Open(n.log)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []NginxRequest
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r, err := parseNginxLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("services: nginx log %s: %w", n.log, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// parseNginxLine parses a line of the log format "limited":
// `1795817939.171 429 "w1"`.
func parseNginxLine(line string) (NginxRequest, error) {
	f := strings.SplitN(line, " ", 3)
	if len(f) != 3 {
		return NginxRequest{}, fmt.Errorf("malformed line %q", line)
	}
	sec, ms, ok := strings.Cut(f[0], ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	m, err2 := strconv.ParseInt(ms, 10, 64)
	status, err3 := strconv.Atoi(f[1])
	if !ok || err1 != nil || err2 != nil || err3 != nil || len(ms) != 3 {
		return NginxRequest{}, fmt.Errorf("malformed line %q", line)
	}
	client := strings.Trim(f[2], `"`)
	if client == "-" {
		client = ""
	}
	return NginxRequest{At: time.Unix(s, m*int64(time.Millisecond)), Client: client, Status: status}, nil
}
