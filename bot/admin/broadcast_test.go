package admin_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"shopbot/bot"
	"shopbot/state/redisstore/work"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
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
//
// Both processes and the fake Telegram share one JumpClock: the pace runs
// on it, and the rate is checked on the times the server recorded on it.
// The first process's waits are jumped over until it has taken
// stopAt buyers, then waited in real time, so the test stops it mid-job
// at a known point; the second one's are jumped over throughout.
func TestBroadcastTo500BuyersWith429And403AndRestart(t *testing.T) {
	clk := bottest.NewJumpClock()
	h := bottest.New(t, botapitest.WithClock(clk.Now))
	withAdmin := func(o *storefront.Options) { o.Admins = []int64{admin} }
	ctx := context.Background()
	jobs := work.NewBroadcasts(h.Rdb.Client, h.Rdb.Prefix)
	const stopAt = 120
	first := h.NewBot(withAdmin)
	first.API.Now = clk.Now
	first.API.Sleep = func(ctx context.Context, d time.Duration) error {
		if j, err := jobs.Get(ctx, "1"); err != nil || j.Pos < stopAt {
			return clk.Sleep(ctx, d)
		}
		select { // the clock moves with real time
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	stopFirst := h.Run(first)
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
	h.WaitText(admin, "Big sale &lt;today&gt;") // the preview, as buyers get it
	// The buyers who blocked the bot are known to have (their chat member
	// updates): the summary leaves them out.
	reach := buyers - len(blocked)
	summary := h.WaitText(admin, fmt.Sprintf("it reaches <b>%d</b> buyers now", reach))
	if _, err := h.Fake.PressButton(admin, summary.MessageID, locales.N(locales.En, "btn.bc_send", int64(reach))); err != nil {
		t.Fatal(err)
	}
	job := func() *work.BroadcastJob {
		var j *work.BroadcastJob
		if !h.Until(func() bool { var err error; j, err = jobs.Get(ctx, "1"); return err == nil }) {
			t.Fatal("no broadcast job")
		}
		return j
	}
	if !h.UntilWithin(30*time.Second, func() bool { j, err := jobs.Get(ctx, "1"); return err == nil && j.Pos >= stopAt }) {
		t.Fatalf("broadcast stuck at %+v", job())
	}
	stopFirst() // the process dies mid-broadcast; another one carries it on
	if j := job(); j.Status == work.BroadcastDone || j.Pos >= buyers {
		t.Fatalf("the first process finished the job before it stopped: %+v", j)
	}
	second := h.NewBot(withAdmin)
	clk.Pace(second.API)
	h.Run(second)
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
	if n := clk.Jumped(); n < buyers/2 {
		t.Fatalf("the clock jumped over %d waits: the broadcast was not paced", n)
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
	has := func(cmds []types.BotCommand, name string) bool {
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
			h.Fake.SetUser(admin, types.User{ID: admin, FirstName: "Admin", LanguageCode: lang})
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
			summary := h.WaitText(admin, locales.T(l, "bc.when_now"))
			out.WriteString(bottest.Render(summary) + "\n")
			if _, err := h.Fake.PressButton(admin, summary.MessageID, locales.N(l, "btn.bc_send", 2)); err != nil {
				t.Fatal(err)
			}
			report := h.WaitText(admin, "✅")
			out.WriteString(bottest.Render(report))
			golden.Check(t, "broadcast/screens_"+lang, out.String())
		})
	}
}
