package admin_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"shopbot/bot"
	"shopbot/state/redisstore/work"

	"shopbot/bot/botapitest"
	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/flows/golden"
	"shopbot/locales"
)

func TestNonAdminBroadcastIsAnUnknownCommand(t *testing.T) {
	h := bottest.New(t)
	h.Run(h.NewBot(func(o *storefront.Options) { o.Admins = []int64{admin} }))
	h.Fake.SendCommand(chat, "broadcast", "")
	if got := h.Wait("sendMessage", 1)[0].String("text"); got != locales.T(locales.En, "err.unknown_command") {
		t.Fatalf("a buyer's /broadcast answered %q", got)
	}
}

// Broadcast to 500 buyers with injected 429s and 403s: the rate stays
// within the limit, every buyer who can receive it gets it exactly once,
// and a restart mid-broadcast resumes without repeats.
func TestBroadcastTo500BuyersWith429And403AndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 20 s at 25 messages a second")
	}
	h := bottest.New(t)
	withAdmin := func(o *storefront.Options) { o.Admins = []int64{admin} }
	first := h.NewBot(withAdmin)
	stopFirst := h.Run(first)
	ctx := context.Background()
	const buyers = 500
	blocked := map[int64]bool{}
	for id := int64(1); id <= buyers; id++ {
		if err := first.Users.Started(ctx, id, time.Unix(1700000000+id, 0)); err != nil {
			t.Fatal(err)
		}
		if id%25 == 0 {
			blocked[id] = true
			h.Fake.BlockChat(id)
		}
	}
	h.Fake.FailNext("sendMessage", 2, 429, "Too Many Requests: retry after 1", 1)

	h.Fake.SendCommand(admin, "broadcast", "")
	h.WaitText(admin, locales.T(locales.En, "bc.compose"))
	h.Fake.SendText(admin, "Big sale <today>")
	preview := h.WaitText(admin, "Preview")
	if !strings.Contains(preview.RawText, "Big sale &lt;today&gt;") || !strings.Contains(preview.RawText, "500 buyers") {
		t.Fatalf("preview = %q", preview.RawText)
	}
	if _, err := h.Fake.PressButton(admin, preview.MessageID, locales.T(locales.En, "btn.bc_send")); err != nil {
		t.Fatal(err)
	}
	jobs := work.NewBroadcasts(h.Rdb.Client, h.Rdb.Prefix)
	job := func() *work.BroadcastJob {
		var j *work.BroadcastJob
		if !h.Until(func() bool { var err error; j, err = jobs.Get(ctx, "1"); return err == nil }) {
			t.Fatal("no broadcast job")
		}
		return j
	}
	if !h.UntilWithin(30*time.Second, func() bool { j, err := jobs.Get(ctx, "1"); return err == nil && j.Pos >= 120 }) {
		t.Fatalf("broadcast stuck at %+v", job())
	}
	stopFirst() // the process dies mid-broadcast; another one carries it on
	h.Run(h.NewBot(withAdmin))
	if !h.UntilWithin(60*time.Second, func() bool {
		j, err := jobs.Get(ctx, "1")
		return err == nil && j.Status == work.BroadcastDone
	}) {
		t.Fatalf("broadcast not finished: %+v", job())
	}
	j := job()
	if j.Sent != buyers-int64(len(blocked)) || j.Blocked != int64(len(blocked)) || j.Failed != 0 {
		t.Fatalf("report %+v", j)
	}
	var times []time.Time
	for _, c := range h.Fake.CallsFor("sendMessage") {
		id := c.Int("chat_id")
		if id == admin || c.String("text") != "Big sale &lt;today&gt;" {
			continue
		}
		if c.OK() {
			times = append(times, c.At)
		}
	}
	for id := int64(1); id <= buyers; id++ {
		got := 0
		for _, m := range h.Fake.MessagesIn(id) {
			if m.RawText == "Big sale &lt;today&gt;" {
				got++
			}
		}
		if want := map[bool]int{true: 0, false: 1}[blocked[id]]; got != want {
			t.Fatalf("buyer %d got the broadcast %d times, want %d", id, got, want)
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := range times {
		k := i
		for k < len(times) && times[k].Sub(times[i]) < time.Second {
			k++
		}
		if k-i > bot.BroadcastRate+1 {
			t.Fatalf("%d broadcast messages within one second from %v", k-i, times[i])
		}
	}
	h.WaitText(admin, "finished") // the report follows the job's last state
	reports := 0
	for _, m := range h.Fake.MessagesIn(admin) {
		if strings.Contains(m.RawText, "finished") {
			reports++
		}
	}
	if reports != 1 {
		t.Fatalf("the final report shows %d times, want once", reports)
	}
}

func TestAdminCommandsAreRegisteredInTheAdminsChatScope(t *testing.T) {
	h := bottest.New(t)
	h.Run(h.NewBot(func(o *storefront.Options) { o.Admins = []int64{admin} }))
	h.Fake.SendCommand(chat, "help", "")
	h.Wait("sendMessage", 1)
	has := func(cmds []botapitest.BotCommand, name string) bool {
		for _, c := range cmds {
			if c.Command == name {
				return true
			}
		}
		return false
	}
	for _, lang := range []string{"", "ru"} {
		adminCmds := h.Fake.MyCommands(botapitest.CommandScope{Type: "chat", ChatID: admin, LanguageCode: lang})
		buyerCmds := h.Fake.MyCommands(botapitest.CommandScope{Type: "default", LanguageCode: lang})
		if !has(adminCmds, "broadcast") || !has(adminCmds, "start") || has(buyerCmds, "broadcast") || !has(buyerCmds, "start") {
			t.Fatalf("lang %q: admin %v, buyers %v", lang, adminCmds, buyerCmds)
		}
	}
	ru := h.Fake.MyCommands(botapitest.CommandScope{Type: "chat", ChatID: admin, LanguageCode: "ru"})
	for _, c := range ru {
		if c.Command == "broadcast" && c.Description != locales.T(locales.Ru, "cmd.broadcast") {
			t.Fatalf("admin command not in Russian: %+v", c)
		}
	}
}

// The admin's broadcast screens, from compose to the final report, read as
// the golden files say; in Russian too.
func TestBroadcastScreensGolden(t *testing.T) {
	for _, lang := range []string{"en", "ru"} {
		t.Run(lang, func(t *testing.T) {
			h := bottest.New(t)
			b := h.NewBot(func(o *storefront.Options) { o.Admins = []int64{admin} })
			h.Run(b)
			h.Fake.SetUser(admin, botapitest.User{ID: admin, FirstName: "Admin", LanguageCode: lang})
			ctx := context.Background()
			for id := int64(1); id <= 3; id++ {
				if err := b.Users.Started(ctx, id, time.Unix(1700000000+id, 0)); err != nil {
					t.Fatal(err)
				}
			}
			h.Fake.BlockChat(2)
			l := locales.Lang(lang)
			var out strings.Builder
			h.Fake.SendCommand(admin, "broadcast", "")
			out.WriteString(bottest.Render(h.WaitText(admin, locales.T(l, "bc.compose"))) + "\n")
			h.Fake.SendText(admin, "Sale <b>today</b>")
			preview := h.WaitText(admin, "Sale &lt;b&gt;today")
			out.WriteString(bottest.Render(preview) + "\n")
			if _, err := h.Fake.PressButton(admin, preview.MessageID, locales.T(l, "btn.bc_send")); err != nil {
				t.Fatal(err)
			}
			report := h.WaitText(admin, "✅")
			out.WriteString(bottest.Render(report))
			golden.Check(t, "broadcast/screens_"+lang, out.String())
		})
	}
}
