package pipeline

import (
	"testing"
)

// TestFormatResult: a success line holds the response embedded when it is
// UTF-8 JSON, else as a string; a string that is not the bytes themselves
// (base64, because they are not UTF-8) says so in "response_encoding", as
// the input does in "input_encoding". A real response that happens to begin
// with "base64:" is written as it is, with no encoding key.
func TestFormatResult(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		id       string
		response string
		want     string
	}{
		{"JSON object", `{"id":1}`, "", `{"ok":true}`,
			`{"input":"{\"id\":1}","response":{"ok":true}}`},
		{"JSON compacted", `x`, "m-1", ` [1, 2] `,
			`{"input":"x","response":[1,2],"message_id":"m-1"}`},
		{"text", `x`, "", `plain text`,
			`{"input":"x","response":"plain text"}`},
		{"text that looks encoded", `x`, "", `base64:/w==`,
			`{"input":"x","response":"base64:/w=="}`},
		{"empty", `x`, "", ``,
			`{"input":"x","response":""}`},
		{"not UTF-8", `x`, "", "\xff\xfe binary",
			`{"input":"x","response":"//4gYmluYXJ5","response_encoding":"base64"}`},
		{"JSON with bytes that are not UTF-8", `x`, "", "\"\xff\"",
			`{"input":"x","response":"Iv8i","response_encoding":"base64"}`},
		{"input and response not UTF-8", "\xff", "", "\xfe",
			`{"input":"/w==","input_encoding":"base64","response":"/g==","response_encoding":"base64"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := formatResult(Result{Input: Element{Data: []byte(tc.input), MessageID: tc.id}, Response: []byte(tc.response)})
			if err != nil {
				t.Fatalf("formatResult: %v", err)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
