package botapitest

import (
	"encoding/json"
	"strings"
	"testing"
)

func article(id string) map[string]any {
	return map[string]any{
		"type": "article", "id": id, "title": "Steam $10",
		"input_message_content": map[string]any{"message_text": "<b>Steam</b> $10", "parse_mode": "HTML"},
		"reply_markup":          map[string]any{"inline_keyboard": [][]map[string]any{{{"text": "Open", "url": "https://t.me/shopbot_test_bot?start=gc-steam"}}}},
	}
}

func TestInlineQueryAnsweredOnce(t *testing.T) {
	s := NewT(t)
	id := s.PushInlineQuery(42, "elden", "", "sender")
	ups := s.QueuedUpdates()
	if len(ups) != 1 || !strings.Contains(string(ups[0].Raw), `"inline_query"`) || !strings.Contains(string(ups[0].Raw), `"query":"elden"`) {
		t.Fatalf("queued = %+v", ups)
	}
	photo := map[string]any{"type": "photo", "id": "p1", "photo_url": "https://img.example/x.jpg", "thumbnail_url": "https://img.example/x.jpg", "caption": "<b>x</b>", "parse_mode": "HTML"}
	status, a := postJSON(t, s, "answerInlineQuery", map[string]any{
		"inline_query_id": id, "results": []any{article("a1"), photo}, "cache_time": 10, "is_personal": true, "next_offset": "10",
		"button": map[string]any{"text": "Open the shop", "start_parameter": "inline"},
	})
	if status != 200 || !a.OK {
		t.Fatalf("answer: %d %+v", status, a)
	}
	got, ok := s.InlineAnswer(id)
	if !ok || len(got.Results) != 2 || got.NextOffset != "10" || got.CacheTime != 10 || !got.IsPersonal || got.Button["start_parameter"] != "inline" {
		t.Fatalf("answer = %+v, %v", got, ok)
	}
	if status, a := postJSON(t, s, "answerInlineQuery", map[string]any{"inline_query_id": id, "results": []any{}}); status != 400 || !strings.Contains(a.Description, "query is too old") {
		t.Fatalf("second answer: %d %+v", status, a)
	}
	if status, _ := postJSON(t, s, "answerInlineQuery", map[string]any{"inline_query_id": "nope", "results": []any{}}); status != 400 {
		t.Fatalf("answer to an unknown query: %d", status)
	}
}

func TestChosenInlineResultIsAValidUpdate(t *testing.T) {
	s := NewT(t)
	u := s.PushChosenInlineResult(42, "a1", "elden")
	raw, _ := json.Marshal(u)
	if !strings.Contains(string(raw), `"chosen_inline_result":{"result_id":"a1"`) {
		t.Fatalf("update = %s", raw)
	}
}

func TestPreparedInlineMessageStored(t *testing.T) {
	s := NewT(t)
	status, a := postJSON(t, s, "savePreparedInlineMessage", map[string]any{"user_id": 42, "result": article("a1"), "allow_user_chats": true, "allow_group_chats": true})
	if status != 200 || !a.OK {
		t.Fatalf("save: %d %+v", status, a)
	}
	var res struct {
		ID  string `json:"id"`
		Exp int64  `json:"expiration_date"`
	}
	_ = json.Unmarshal(a.Result, &res)
	p, ok := s.PreparedMessage(res.ID)
	if !ok || p.UserID != 42 || p.Result["id"] != "a1" || !p.Allow["allow_group_chats"] || p.Expires.Unix() != res.Exp {
		t.Fatalf("prepared %q = %+v, %v", res.ID, p, ok)
	}
	if status, _ := postJSON(t, s, "savePreparedInlineMessage", map[string]any{"user_id": 42, "result": article("a1")}); status != 400 {
		t.Fatalf("no chat type allowed: %d, want 400", status)
	}
}

func TestInlineAnswerViolations(t *testing.T) {
	many := make([]any, 51)
	for i := range many {
		many[i] = article("a" + strings.Repeat("x", i))
	}
	cases := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"too many results", map[string]any{"results": many}, "at most 50 results"},
		{"duplicate ids", map[string]any{"results": []any{article("a"), article("a")}}, `result id "a" used twice`},
		{"long id", map[string]any{"results": []any{article(strings.Repeat("i", 65))}}, "results[0].id: must be 1-64 bytes"},
		{"long offset", map[string]any{"results": []any{}, "next_offset": strings.Repeat("1", 65)}, "next_offset: must be at most 64 bytes"},
		{"bad start parameter", map[string]any{"results": []any{}, "button": map[string]any{"text": "x", "start_parameter": "a b"}}, "start_parameter: must be 1-64 characters"},
		{"button without action", map[string]any{"results": []any{}, "button": map[string]any{"text": "x"}}, "exactly one of web_app and start_parameter"},
		{"bad HTML", map[string]any{"results": []any{map[string]any{"type": "article", "id": "a", "title": "t",
			"input_message_content": map[string]any{"message_text": "<b>x", "parse_mode": "HTML"}}}}, "can't parse entities"},
		{"empty text", map[string]any{"results": []any{map[string]any{"type": "article", "id": "a", "title": "t",
			"input_message_content": map[string]any{"message_text": " "}}}}, "message text is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			s := NewT(rec)
			tc.params["inline_query_id"] = s.PushInlineQuery(42, "x", "", "")
			if status, _ := postJSON(t, s, "answerInlineQuery", tc.params); status != 400 {
				t.Errorf("status %d, want 400", status)
			}
			got := strings.Join(rec.errors(), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("violations:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}
