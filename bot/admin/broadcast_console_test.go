package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"shopbot/bot/bottest"
	"shopbot/bot/console"
	"shopbot/bot/storefront"
	"shopbot/bot/webapp"
	"shopbot/bot/webapp/initdata"
	"shopbot/flows/shop"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
)

// consoleCall makes a request of the console's API at base as user.
func consoleCall(t *testing.T, h *bottest.Harness, base string, user int64, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+"api/"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(console.InitDataHeader, initdata.SignUser(h.Fake.Token(), initdata.User{ID: user, FirstName: "Staff", LanguageCode: "en"}, time.Now()))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// The console's broadcast form takes the chat's options: the size of an
// audience before sending, an audience, a button into the shop and a
// time; what it schedules is listed with its time, checked as the chat
// checks it (a line the shop lacks, a past time, a button it cannot read
// are refused), gated (a support agent is refused) and audited; cancelled,
// it leaves the list of scheduled ones.
func TestConsoleBroadcastToAnAudienceWithAButtonAtATime(t *testing.T) {
	h := bottest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const agent = int64(9100)
	b := h.NewBot(func(o *storefront.Options) {
		o.Admins, o.SupportAgents, o.HTTPListener = []int64{admin}, []int64{agent}, ln
	})
	app, err := b.ServeWebApp(webapp.Options{}, &shop.Shop{})
	if err != nil {
		t.Fatal(err)
	}
	h.Run(b)
	h.Listening()
	base := "http://" + ln.Addr().String() + app.Path() + "admin/"
	ctx := context.Background()
	for id, lang := range map[int64]string{401: "ru", 402: "ru", 403: "en"} {
		if err := b.Users.Started(ctx, id, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.Users.Seen(ctx, id, lang, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Users.SetMarketingOff(ctx, 402, true, time.Now()); err != nil {
		t.Fatal(err)
	}

	code, got := consoleCall(t, h, base, admin, "GET", "broadcasts?audience=lang:ru", nil)
	aud, _ := got["audience"].(map[string]any)
	if code != 200 || aud["members"] != 2.0 || aud["skipped_optout"] != 1.0 || aud["reach"] != 1.0 || got["buyers"] != 2.0 {
		t.Fatalf("preview of lang:ru: %d %v", code, got)
	}
	if code, _ := consoleCall(t, h, base, agent, "GET", "broadcasts?audience=lang:ru", nil); code != http.StatusForbidden {
		t.Fatalf("a support agent's preview answered %d", code)
	}
	for _, bad := range []struct {
		body map[string]any
		says string // the refusal, the chat's words
	}{
		{map[string]any{"text": "Hi", "audience": "line:nothing"}, en("bc.bad_audience")},
		{map[string]any{"text": "Hi", "audience": "lang:ru", "at": "2001-01-01 10:00"}, en("bc.when_bad")},
		{map[string]any{"text": "Hi", "buttons": []map[string]string{{"label": "Go", "link": "not a link"}}}, "Not understood: Go | not a link."},
		{map[string]any{"text": "Hi", "audience": "everyone"}, en("bc.bad_audience")},
	} {
		code, got := consoleCall(t, h, base, admin, "POST", "broadcasts", bad.body)
		e, _ := got["error"].(map[string]any)
		if msg, _ := e["message"].(string); code != http.StatusBadRequest || !strings.Contains(msg, bad.says) {
			t.Fatalf("%v answered %d %v", bad.body, code, got)
		}
	}
	if code, _ := consoleCall(t, h, base, agent, "POST", "broadcasts", map[string]any{"text": "Hi"}); code != http.StatusForbidden {
		t.Fatalf("a support agent's broadcast answered %d", code)
	}
	code, got = consoleCall(t, h, base, admin, "POST", "broadcasts", map[string]any{
		"text": "Скидки <сегодня>", "audience": "lang:ru", "at": "+3h",
		"buttons": []map[string]string{{"label": "Steam", "link": "gc-steam-us"}},
	})
	if code != 200 || got["id"] != "1" || got["at"] == nil {
		t.Fatalf("schedule: %d %v", code, got)
	}
	jobs := work.NewBroadcasts(h.Rdb.Client, h.Rdb.Prefix)
	j, err := jobs.Get(ctx, "1")
	if err != nil || j.Status != work.BroadcastScheduled || j.Audience != "lang:ru" || j.Text != "Скидки &lt;сегодня&gt;" ||
		!strings.Contains(j.Buttons, "gc-steam-us") || time.Until(j.At) < 2*time.Hour {
		t.Fatalf("job %+v %v", j, err)
	}
	h.WaitText(admin, "Broadcast #1 is scheduled for")
	code, got = consoleCall(t, h, base, admin, "GET", "broadcasts", nil)
	list, _ := got["broadcasts"].([]any)
	if code != 200 || len(list) != 1 || list[0].(map[string]any)["status"] != "scheduled" || list[0].(map[string]any)["at"] == nil {
		t.Fatalf("list: %d %v", code, got)
	}
	entries, err := records.NewAuditLog(h.Rdb.Client, h.Rdb.Prefix).Recent(ctx, 10)
	if err != nil || len(entries) == 0 || entries[0].Action != state.AuditBroadcast || entries[0].Actor.Via != state.ViaConsole ||
		!strings.Contains(entries[0].Detail, "lang:ru at ") {
		t.Fatalf("audit %+v %v", entries, err)
	}
	if code, got := consoleCall(t, h, base, admin, "POST", "broadcasts/1/stop", map[string]any{}); code != 200 || got["was_running"] != true {
		t.Fatalf("cancel: %d %v", code, got)
	}
	if ids, _ := jobs.Scheduled(ctx); len(ids) != 0 {
		t.Fatalf("scheduled after the cancel: %v", ids)
	}
	h.NoViolations()
}
