package clientcall_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc/codes"
)

// TestJSONRoundTrip checks that the configuration survives the JSON encoding
// Beam uses for DoFn fields, including after Setup.
func TestJSONRoundTrip(t *testing.T) {
	t.Setenv("CLIENTCALL_TEST_RT", "secret-from-env")
	tests := []struct {
		name string
		v    any
		ptr  any
	}{
		{"HTTP", &clientcall.HTTP{
			URL: "http://127.0.0.1:1/api", Method: "PUT", ContentType: "text/plain",
			Headers: map[string]string{"X-A": "b"}, HeaderEnv: map[string]string{"Authorization": "CLIENTCALL_TEST_RT"},
			Timeout: time.Second, MaxResponseBytes: 10, MaxConnsPerHost: 3, ItemStatusField: "status",
		}, &clientcall.HTTP{}},
		{"StatusClassifier", &clientcall.StatusClassifier{HTTPStatuses: []int{403}, GRPCCodes: []codes.Code{codes.Unavailable}}, &clientcall.StatusClassifier{}},
		{"Echo", &clientcall.Echo{}, &clientcall.Echo{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if h, ok := tt.v.(*clientcall.HTTP); ok {
				if err := h.Setup(t.Context()); err != nil {
					t.Fatalf("Setup: %v", err)
				}
			}
			data, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if strings.Contains(string(data), "secret-from-env") {
				t.Errorf("Marshal = %s, holds the value resolved from the environment", data)
			}
			if err := json.Unmarshal(data, tt.ptr); err != nil {
				t.Fatalf("Unmarshal(%s): %v", data, err)
			}
			if diff := cmp.Diff(tt.v, tt.ptr, cmpopts.IgnoreUnexported(clientcall.HTTP{})); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
