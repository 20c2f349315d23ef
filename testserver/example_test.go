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

// A quota of 100 tokens per minute, each request saying its tokens in a
// JSON field. A batch, a JSON array, costs the sum of its items' tokens.
func ExampleConfig_costField() {
	now := time.Unix(0, 0)
	h, err := testserver.NewHandler(testserver.Config{
		Quota: 100, Period: time.Minute, CostField: "tokens", Now: func() time.Time { return now },
	})
	if err != nil {
		log.Fatal(err)
	}
	send := func(body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/api", strings.NewReader(body)))
		fmt.Print(rec.Code, " ")
		if ra := rec.Header().Get("Retry-After"); ra != "" {
			fmt.Print("Retry-After: ", ra, " ")
		}
		fmt.Println(strings.TrimSpace(rec.Body.String()))
	}
	send(`[{"tokens":60},{"tokens":30}]`)
	send(`{"tokens":20}`) // 10 tokens left, 10 more in 6s
	send(`{"tokens":10}`)
	send(`{"tokens":500}`) // never fits: not worth retrying
	send(`{"tokens":-1}`)
	s := h.Stats()
	fmt.Printf("accepted %d (%d tokens), rejected %d (%d tokens)\n", s.Accepted, s.AcceptedCost, s.Rejected, s.RejectedCost)
	// Output:
	// 200 [{"tokens":60},{"tokens":30}]
	// 429 Retry-After: 6 testserver: over quota
	// 200 {"tokens":10}
	// 413 testserver: cost 500 exceeds the quota's capacity of 100
	// 400 testserver: bad cost: cost field "tokens": -1 is not a non-negative integer
	// accepted 2 (100 tokens), rejected 1 (20 tokens)
}

// A batch whose items fail one by one: the answer has one entry per item,
// the item itself or an error with its status.
func ExampleConfig_itemErrorRate() {
	h, err := testserver.NewHandler(testserver.Config{ItemErrorRate: 0.5, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api", strings.NewReader(`[{"id":1},{"id":2},{"id":3},{"id":4}]`)))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(rec.Body)
	s := h.Stats()
	fmt.Printf("items %d, item errors %d\n", s.Items, s.ItemErrors)
	// Output:
	// 200 application/json
	// [{"id":1},{"status":500,"error":"testserver: injected item error"},{"id":3},{"status":500,"error":"testserver: injected item error"}]
	// items 4, item errors 2
}
