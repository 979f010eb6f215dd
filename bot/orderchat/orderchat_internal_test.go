package orderchat

import (
	"encoding/json"
	"fmt"
	"shopbot/state/redisstore/work"
	"strings"
	"testing"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

func chatOf(t *testing.T, raw string) *reseller.Chat {
	t.Helper()
	var ch reseller.Chat
	if err := json.Unmarshal([]byte(raw), &ch); err != nil {
		t.Fatal(err)
	}
	return &ch
}

func TestTranscriptKeepsTheNewestThatFit(t *testing.T) {
	var msgs []string
	for i := 1; i <= 300; i++ {
		author := "operator"
		if i%2 == 0 {
			author = "client"
		}
		msgs = append(msgs, fmt.Sprintf(`{"id":%d,"author":%q,"text":"message number %d <b>","created_at":"2026-05-01T%02d:%02d:00Z"}`, i, author, i, i/60, i%60))
	}
	ch := chatOf(t, `{"object":"chat","chat_opened":true,"chat_frozen":true,"messages":[`+strings.Join(msgs, ",")+`]}`)
	env := &flows.Env{Lang: locales.En}
	o := &state.Order{ID: 12, UpstreamNumber: 1234, UserID: 5001}
	text := (&Relay{}).transcriptText(env, o, ch, &work.ChatInfo{Messages: map[string]string{}})
	if n := locales.UTF16Len(text); n > maxMessageChars {
		t.Fatalf("transcript is %d characters", n)
	}
	if !strings.Contains(text, "earlier messages are not shown") || !strings.Contains(text, locales.T(locales.En, "oc.frozen_admin")) {
		t.Fatalf("transcript head:\n%s", text[:300])
	}
	if !strings.Contains(text, "message number 300 &lt;b&gt;") || strings.Contains(text, "message number 1 &lt;b&gt;") {
		t.Fatalf("the newest message is missing:\n%s", text)
	}
	if !strings.Contains(text, "(upstream #1234, buyer <code>5001</code>)") {
		t.Fatalf("head: %q", text[:120])
	}
}

func TestChronologicalAndMessageKeys(t *testing.T) {
	ch := chatOf(t, `{"messages":[
		{"id":"b","text":"second","created_at":"2026-05-01T10:02:00Z"},
		{"id":"a","text":"first","created_at":"2026-05-01T10:01:00Z"}]}`)
	got := chronological(ch.Messages)
	if got[0].Text() != "first" || messageKey(&got[0]) != "i:a" {
		t.Fatalf("sorted: %q first, key %q", got[0].Text(), messageKey(&got[0]))
	}
	// Without times on every message, the listed order stands.
	ch = chatOf(t, `{"messages":[{"text":"x","created_at":"2026-05-01T10:02:00Z"},{"text":"y"}]}`)
	if got := chronological(ch.Messages); got[0].Text() != "x" {
		t.Fatal("an untimed list was reordered")
	}
	// A message without an id is keyed by its content, stably.
	k1, k2 := messageKey(&ch.Messages[0]), messageKey(&ch.Messages[1])
	if !strings.HasPrefix(k1, "h:") || k1 == k2 || k1 != messageKey(&chatOf(t, `{"messages":[{"text":"x","created_at":"2026-05-01T10:02:00Z"}]}`).Messages[0]) {
		t.Fatalf("keys %q %q", k1, k2)
	}
	if messageKey(nil) != "" || messageKey(&reseller.ChatMessage{}) != "" {
		t.Fatal("an empty message has a key")
	}
	// Who wrote it: as the message says, else whatever we did not send.
	own := chatOf(t, `{"messages":[{"id":1,"text":"mine"},{"id":2,"author":"client","text":"c"},{"id":3,"is_operator":true}]}`).Messages
	if fromOperator(&own[0], true) || !fromOperator(&own[0], false) || fromOperator(&own[1], false) || !fromOperator(&own[2], true) {
		t.Fatal("fromOperator")
	}
	for _, tt := range []struct{ in, want string }{
		{"Hello! I am the operator for order #48213 (PSN).", "Hello! I am the operator for order #7 (PSN)."},
		{"Заказ №48213 готов", "Заказ №7 готов"},
		{"order #482130 and 48213", "order #482130 and 48213"}, // another number, a bare number
	} {
		if got := ownNumbers(tt.in, 48213, 7); got != tt.want {
			t.Errorf("ownNumbers(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
