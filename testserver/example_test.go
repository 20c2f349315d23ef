package testserver_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func ExampleNewServer() {
	srv, err := testserver.NewServer(testserver.Config{Quota: 2, Period: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	for i := range 3 {
		res, err := http.Post(srv.Endpoint(), "text/plain", strings.NewReader(fmt.Sprint("request ", i)))
		if err != nil {
			log.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			fmt.Printf("%d %s\n", res.StatusCode, body)
		} else {
			fmt.Printf("%d Retry-After: %s\n", res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	s := srv.Handler.Stats()
	fmt.Printf("accepted %d, rejected %d\n", s.Accepted, s.Rejected)
	// Output:
	// 200 request 0
	// 200 request 1
	// 429 Retry-After: 30
	// accepted 2, rejected 1
}

func ExampleHandler_SetQuota() {
	h, err := testserver.NewHandler(testserver.Config{Quota: 100})
	if err != nil {
		log.Fatal(err)
	}
	h.SetQuota(5, 10*time.Second)
	s := h.Stats()
	fmt.Println(s.Quota, s.Period, s.Mode)
	// Output: 5 10s token-bucket
}

// A strict limiter of 10 requests per second with no burst, as API
// gateways are often configured: requests must come at least 100ms apart.
func ExampleMode_gcra() {
	now := time.Unix(0, 0)
	h, err := testserver.NewHandler(testserver.Config{
		Quota: 10, Mode: testserver.GCRA, Now: func() time.Time { return now },
	})
	if err != nil {
		log.Fatal(err)
	}
	send := func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/api", strings.NewReader("x")))
		fmt.Printf("%v: %d", now.Sub(time.Unix(0, 0)), rec.Code)
		if ra := rec.Header().Get("Retry-After"); ra != "" {
			fmt.Print(" Retry-After: ", ra)
		}
		fmt.Println()
	}
	send()
	send() // back to back
	now = now.Add(50 * time.Millisecond)
	send()
	now = now.Add(50 * time.Millisecond)
	send()
	// Output:
	// 0s: 200
	// 0s: 429 Retry-After: 1
	// 50ms: 429 Retry-After: 1
	// 100ms: 200
}
