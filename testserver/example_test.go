package testserver_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
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
