package admin_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/storefront"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// lastWith waits until one of the bot's messages in the admin's chat
// shows part and returns the newest such.
func lastWith(t *testing.T, h *bottest.Harness, part string) types.Message {
	t.Helper()
	var found types.Message
	if !h.Until(func() bool {
		msgs := h.BotMessages(admin)
		for i := len(msgs) - 1; i >= 0; i-- {
			if strings.Contains(msgs[i].RawText, part) {
				found = msgs[i]
				return true
			}
		}
		return false
	}) {
		var all []string
		for _, m := range h.BotMessages(admin) {
			all = append(all, m.RawText)
		}
		t.Fatalf("the admin's chat never showed %q; it has %q", part, all)
	}
	return found
}

// rows are m's buttons, one a line, as label -> URL.
func rows(m types.Message) string {
	var b strings.Builder
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, btn := range row {
				b.WriteString(btn.Text + " -> " + btn.URL + " ")
			}
			b.WriteString("\n")
		}
	}
	return strings.ReplaceAll(b.String(), " \n", "\n")
}

// broadcastsTo are the messages carrying text in buyer's chat.
func broadcastsTo(h *bottest.Harness, buyer int64, text string) []types.Message {
	var out []types.Message
	for _, m := range h.BotMessages(buyer) {
		if strings.Contains(m.RawText, text) {
			out = append(out, m)
		}
	}
	return out
}

func waitJob(t *testing.T, h *bottest.Harness, id, status string) *work.BroadcastJob {
	t.Helper()
	jobs := work.NewBroadcasts(h.Rdb.Client, h.Rdb.Prefix)
	var j *work.BroadcastJob
	if !h.UntilWithin(30*time.Second, func() bool {
		var err error
		j, err = jobs.Get(context.Background(), id)
		return err == nil && j.Status == status
	}) {
		t.Fatalf("broadcast %s never %s: %+v", id, status, j)
	}
	return j
}

// A photo with a caption and two buttons (a product of the shop, a web
// address) goes to the buyers who bought gift cards, chosen in the audience
// picker after trying a language: exactly those get it, by the photo's
// file_id, the one who turned news off is skipped and the one who blocked
// the bot counted; the preview is the same message with its shop link
// untagged; the buyers who start the bot through the broadcast's link are
// counted once each, and the report shows them.
func TestBroadcastPhotoWithButtonsToTheBuyersOfALine(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(func(o *storefront.Options) { o.Admins = []int64{admin} })
	h.Run(b)
	ctx := context.Background()
	at := time.Now().Add(-48 * time.Hour)
	buyers := []struct {
		id   int64
		lang string
		line string
	}{{101, "en", "giftcards"}, {102, "en", "giftcards"}, {103, "en", "keys"}, {104, "uk", ""}, {105, "ru", "giftcards"}, {106, "en", "giftcards"}}
	for _, by := range buyers {
		if err := b.Users.Started(ctx, by.id, at); err != nil {
			t.Fatal(err)
		}
		if err := b.Users.Seen(ctx, by.id, by.lang, at); err != nil {
			t.Fatal(err)
		}
		if by.line != "" {
			if err := b.Users.Bought(ctx, by.id, by.line, by.lang, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Users.SetMarketingOff(ctx, 102, true, at); err != nil {
		t.Fatal(err)
	}
	if err := b.Users.SetBlocked(ctx, 106, true, at); err != nil {
		t.Fatal(err)
	}
	h.Listening()
	bot := b.Username()

	h.Fake.SendCommand(admin, "broadcast", "")
	h.WaitText(admin, en("bc.compose"))
	photo := h.Fake.SendPhoto(admin, "Steam <sale>").Message.Photo
	summary := lastWith(t, h, en("bc.when_now"))
	if !strings.Contains(summary.RawText, "reaches <b>4</b> buyers") || !strings.Contains(summary.RawText, en("bc.media.photo")) {
		t.Fatalf("summary of all: %q", summary.RawText)
	}
	h.Press(b, admin, summary, en("btn.bc_audience"))
	h.Press(b, admin, summary, en("bc.aud.btn.lang"))
	h.Press(b, admin, summary, "Русский")
	summary = lastWith(t, h, en("bc.aud.lang", "lang", "Русский"))
	if !strings.Contains(summary.RawText, "reaches <b>1</b> buyer now") {
		t.Fatalf("summary of Russian: %q", summary.RawText)
	}
	h.Press(b, admin, summary, en("btn.bc_audience"))
	h.Press(b, admin, summary, en("bc.aud.btn.line"))
	h.Press(b, admin, summary, en("line.giftcards"))
	summary = lastWith(t, h, en("bc.aud.line", "line", en("line.giftcards")))
	if !strings.Contains(summary.RawText, "reaches <b>2</b> buyers now") || !strings.Contains(summary.RawText, en("bc.apart", "optout", 1, "blocked", 1)) {
		t.Fatalf("summary of the gift card buyers: %q", summary.RawText)
	}
	h.Press(b, admin, summary, en("btn.bc_buttons"))
	h.Fake.SendText(admin, "Steam cards | gc-steam-us\nnot a button")
	lastWith(t, h, "Not understood: <code>not a button</code>")
	h.Fake.SendText(admin, "Steam cards | https://t.me/"+bot+"?start=gc-steam-us\nOur site | https://example.com/sale")
	summary = lastWith(t, h, "[Steam cards → gc-steam-us] [Our site → https://example.com/sale]")
	previews := len(h.Fake.CallsFor("sendPhoto"))
	h.Press(b, admin, summary, en("btn.bc_preview"))
	calls := h.WaitWithin(bottest.WaitLimit, "sendPhoto", previews+1)
	preview := calls[len(calls)-1]
	// wantRows: the buttons, one a row, as label -> URL.
	wantRows := func(link string) string {
		return "Steam cards -> " + link + "\nOur site -> https://example.com/sale\n"
	}
	if m := preview.Result.(types.Message); preview.Int("chat_id") != admin || preview.String("photo") != photo[len(photo)-1].FileID ||
		m.Caption != "Steam <sale>" || rows(m) != wantRows("https://t.me/"+bot+"?start=gc-steam-us") {
		t.Fatalf("preview %+v", m)
	}
	summary = lastWith(t, h, en("bc.when_now"))
	h.Press(b, admin, summary, locales.N(locales.En, "btn.bc_send", 2))
	j := waitJob(t, h, "1", work.BroadcastDone)
	if j.Total != 4 || j.Sent != 2 || j.OptedOut != 1 || j.Blocked != 1 || j.Failed != 0 {
		t.Fatalf("results %+v", j)
	}
	for _, by := range buyers {
		got := broadcastsTo(h, by.id, "Steam &lt;sale&gt;")
		want := by.id == 101 || by.id == 105
		if len(got) != map[bool]int{true: 1, false: 0}[want] {
			t.Fatalf("buyer %d got %d broadcasts", by.id, len(got))
		}
		if want {
			m := got[0]
			if len(m.Photo) == 0 || m.Method != "sendPhoto" || rows(m) != wantRows("https://t.me/"+bot+"?start=bc1_gc-steam-us") {
				t.Fatalf("buyer %d got %+v", by.id, m)
			}
		}
	}
	report := lastWith(t, h, "finished: 2 sent")
	if !strings.Contains(report.RawText, en("bc.skipped_optout", "n", 1)) || !strings.Contains(report.RawText, en("bc.opens", "n", 0)) {
		t.Fatalf("report %q", report.RawText)
	}

	// Opens: a recipient twice, a buyer the link was forwarded to, and a
	// tag of no broadcast.
	h.Fake.SendCommand(101, "start", "bc1_gc-steam-us")
	h.Fake.SendCommand(101, "start", "bc1_gc-steam-us")
	h.Fake.SendCommand(104, "start", "bc1_gc-steam-us")
	h.Fake.SendCommand(103, "start", "bc99_gc-steam-us")
	jobs := work.NewBroadcasts(h.Rdb.Client, h.Rdb.Prefix)
	h.Idle(b)
	if !h.Until(func() bool { j, err := jobs.Get(ctx, "1"); return err == nil && j.Opens == 2 }) {
		j, _ := jobs.Get(ctx, "1")
		t.Fatalf("opens %d, want 2", j.Opens)
	}
	if _, err := jobs.Get(ctx, "99"); err == nil {
		t.Fatal("an open of no broadcast made one")
	}
	h.Press(b, admin, report, en("btn.bc_refresh"))
	if got, _ := h.Fake.Message(admin, report.MessageID); !strings.Contains(got.RawText, en("bc.opens", "n", 2)) {
		t.Fatalf("refreshed report %q", got.RawText)
	}
	h.NoViolations()
}

// A video and a document with captions go again by the file_id the admin
// sent them with, to every buyer (sendVideo and sendDocument, checked
// against the Bot API schema by the fake server, which refuses a video
// file_id it never gave out).
func TestBroadcastVideoAndDocumentGoByTheirFileID(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(func(o *storefront.Options) { o.Admins = []int64{admin} })
	h.Run(b)
	ctx := context.Background()
	for _, id := range []int64{201, 202} {
		if err := b.Users.Started(ctx, id, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range []struct {
		method, field string
		send          func() string
	}{
		{"sendVideo", "video", func() string { return h.Fake.SendVideo(admin, "New trailer").Message.Video.FileID }},
		{"sendDocument", "document", func() string {
			return h.Fake.SendDocumentFile(admin, "price-list.pdf", "Price list").Message.Document.FileID
		}},
	} {
		h.Fake.SendCommand(admin, "broadcast", "")
		h.WaitText(admin, en("bc.compose"))
		file := c.send()
		summary := lastWith(t, h, en("bc.media."+c.field))
		h.Press(b, admin, summary, locales.N(locales.En, "btn.bc_send", 2))
		j := waitJob(t, h, fmt.Sprint(i+1), work.BroadcastDone)
		if j.Sent != 2 || j.Media != c.field || j.FileID != file {
			t.Fatalf("%s: %+v", c.method, j)
		}
		var to []int64
		for _, call := range h.Fake.CallsFor(c.method) {
			if call.OK() && call.String(c.field) == file && call.Int("chat_id") != admin {
				to = append(to, call.Int("chat_id"))
			}
		}
		slices.Sort(to)
		if !slices.Equal(to, []int64{201, 202}) {
			t.Fatalf("%s by file_id went to %v", c.method, to)
		}
	}
	h.NoViolations()
}

// shiftClock is the wall clock moved forward by the test.
type shiftClock struct {
	mu    sync.Mutex
	shift time.Duration
}

func (c *shiftClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.shift)
}
func (c *shiftClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.shift += d
	c.mu.Unlock()
}

// A broadcast scheduled in two hours from one replica, which then stops,
// goes when its time comes from two other replicas sharing the store:
// every buyer gets it exactly once and the admin one report. A second one
// scheduled later is still waiting then, and cancelling it takes it off the
// schedule.
func TestScheduledBroadcastSurvivesARestartAndGoesOnceAcrossReplicas(t *testing.T) {
	h := bottest.New(t)
	clk := &shiftClock{}
	withAdmin := func(o *storefront.Options) { o.Admins, o.Now = []int64{admin}, clk.Now }
	first := h.NewBot(withAdmin)
	stopFirst := h.Run(first)
	ctx := context.Background()
	buyers := []int64{301, 302, 303}
	for _, id := range buyers {
		if err := first.Users.Started(ctx, id, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// newWith waits for a message of the admin's chat newer than every
	// one before the step, showing part.
	newWith := func(part string, step func()) types.Message {
		t.Helper()
		msgs := h.BotMessages(admin)
		last := 0
		if len(msgs) > 0 {
			last = msgs[len(msgs)-1].MessageID
		}
		step()
		var found types.Message
		if !h.Until(func() bool {
			for _, m := range h.BotMessages(admin) {
				if m.MessageID > last && strings.Contains(m.RawText, part) {
					found = m
				}
			}
			return found.MessageID != 0
		}) {
			t.Fatalf("no new message shows %q", part)
		}
		return found
	}
	schedule := func(id, text, when string) types.Message {
		t.Helper()
		newWith(en("bc.compose"), func() { h.Fake.SendCommand(admin, "broadcast", "") })
		summary := newWith(en("bc.when_now"), func() { h.Fake.SendText(admin, text) })
		h.Press(first, admin, summary, en("btn.bc_when"))
		summary = newWith("Scheduled for", func() { h.Fake.SendText(admin, when) })
		return newWith("Broadcast #"+id+" is scheduled for", func() { h.Press(first, admin, summary, en("btn.bc_schedule")) })
	}
	newWith(en("bc.compose"), func() { h.Fake.SendCommand(admin, "broadcast", "") })
	summary := newWith(en("bc.when_now"), func() { h.Fake.SendText(admin, "Too late") })
	h.Press(first, admin, summary, en("btn.bc_when"))
	ask := newWith("<b>When?</b>", func() { h.Fake.SendText(admin, "2001-01-01 10:00") })
	if !strings.Contains(lastWith(t, h, en("bc.when_bad")).RawText, "90 days") {
		t.Fatal("a past time was not refused")
	}
	h.Press(first, admin, ask, en("btn.back"))
	h.Press(first, admin, lastWith(t, h, en("bc.when_now")), en("btn.cancel"))

	schedule("1", "Flash sale", "+2h")
	msg2 := schedule("2", "Later sale", "+4h")
	jobs := work.NewBroadcasts(h.Rdb.Client, h.Rdb.Prefix)
	if ids, err := jobs.Scheduled(ctx); err != nil || !slices.Equal(ids, []string{"1", "2"}) {
		t.Fatalf("scheduled %v %v", ids, err)
	}
	stopFirst()

	second, third := h.NewBot(withAdmin), h.NewBot(withAdmin)
	h.Run(second)
	h.Run(third)
	clk.Advance(2*time.Hour + time.Minute)
	waitJob(t, h, "1", work.BroadcastDone)
	if j, _ := jobs.Get(ctx, "2"); j.Status != work.BroadcastScheduled {
		t.Fatalf("the later broadcast is %s before its time", j.Status)
	}
	lastWith(t, h, "#1 finished: 3 sent")
	for _, id := range buyers {
		if n := len(broadcastsTo(h, id, "Flash sale")); n != 1 {
			t.Fatalf("buyer %d got the scheduled broadcast %d times", id, n)
		}
		if n := len(broadcastsTo(h, id, "Later sale")); n != 0 {
			t.Fatalf("buyer %d got the later broadcast before its time", id)
		}
	}
	reports := 0
	for _, m := range h.BotMessages(admin) {
		if strings.Contains(m.RawText, "#1 finished") {
			reports++
		}
	}
	if reports != 1 {
		t.Fatalf("%d reports of the scheduled broadcast", reports)
	}

	h.Press(second, admin, msg2, en("btn.bc_cancel"))
	waitJob(t, h, "2", work.BroadcastCancelled)
	s := sched.NewNamedSchedule(h.Rdb.Client, h.Rdb.Prefix, "broadcast")
	if _, ok, err := s.Due(ctx, "bcast:2"); err != nil || ok {
		t.Fatalf("the cancelled broadcast is still on the schedule (%v)", err)
	}
	if ids, _ := jobs.Scheduled(ctx); len(ids) != 0 {
		t.Fatalf("scheduled after the cancel: %v", ids)
	}
	h.NoViolations()
}

// A delivered order puts its buyer in the audience of its line, and their
// language with it: the profile is kept as orders are delivered.
func TestADeliveredOrderPutsItsBuyerInItsLinesAudience(t *testing.T) {
	s := shoptest.New(t)
	b := s.Worker(nil)
	s.Run(b)
	ctx := context.Background()
	if err := b.Users.Started(ctx, bottest.Chat, time.Now()); err != nil {
		t.Fatal(err)
	}
	line := state.Audience{Kind: state.AudienceLine, Line: "giftcards"}
	recent := state.Audience{Kind: state.AudienceRecent, Days: 1}
	count := func(a state.Audience) int64 {
		t.Helper()
		c, err := b.Users.CountAudience(ctx, a, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Members
	}
	if count(line) != 0 || count(recent) != 0 || count(state.Audience{Kind: state.AudienceNever}) != 1 {
		t.Fatal("a buyer who bought nothing is in a buyers' audience")
	}
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitDelivered(o.ID)
	if !s.Until(func() bool { return count(line) == 1 }) {
		t.Fatal("the delivered order did not put its buyer in its line's audience")
	}
	if count(recent) != 1 || count(state.Audience{Kind: state.AudienceNever}) != 0 || count(state.Audience{Kind: state.AudienceLang, Lang: "en"}) != 1 {
		t.Fatal("the profile lacks the purchase's time or language")
	}
}

// A buyer's language is kept as they use the bot: the one their client
// has, then the one they choose.
func TestTheBuyersLanguageIsKeptAsTheyUseTheBot(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(nil)
	h.Run(b)
	ctx := context.Background()
	h.Fake.SetUser(bottest.Chat, types.User{ID: bottest.Chat, FirstName: "Olena", LanguageCode: "uk"})
	h.Command(b, bottest.Chat, "start", "")
	lang := func() string {
		ps, err := b.Users.Profiles(ctx, 0, 10, nil)
		if err != nil || len(ps) != 1 {
			t.Fatalf("profiles %+v %v", ps, err)
		}
		return ps[0].Lang
	}
	if got := lang(); got != "uk" {
		t.Fatalf("language after /start %q, want uk", got)
	}
	h.Command(b, bottest.Chat, "language", "")
	h.Tap(b, "Русский")
	if !h.Until(func() bool { return lang() == "ru" }) {
		t.Fatalf("language after choosing Russian %q", lang())
	}
}

// A broadcast an older build began (in its set of running jobs, no
// recipients listed, one buyer already taken) is carried on to the other
// buyers, in the order they started, as that build would have.
func TestABroadcastOfAnOlderBuildIsCarriedOnToEveryBuyer(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(func(o *storefront.Options) { o.Admins = []int64{admin} })
	ctx := context.Background()
	for i, id := range []int64{501, 502, 503} {
		if err := b.Users.Started(ctx, id, time.Unix(1_700_000_000+int64(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	key := h.Rdb.Prefix + "{broadcast}:"
	if err := h.Rdb.Client.HSet(ctx, key+"1", "admin", admin, "text", "Old news", "lang", "en", "status", "running",
		"pos", 1, "total", 3, "sent", 1, "blocked", 0, "failed", 0, "progress", 0, "created", time.Now().Unix()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := h.Rdb.Client.Set(ctx, key+"seq", 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := h.Rdb.Client.SAdd(ctx, key+"active", "1").Err(); err != nil {
		t.Fatal(err)
	}
	h.Run(b)
	j := waitJob(t, h, "1", work.BroadcastDone)
	if j.Sent != 3 || j.Total != 3 {
		t.Fatalf("older job %+v", j)
	}
	for id, want := range map[int64]int{501: 0, 502: 1, 503: 1} {
		if n := len(broadcastsTo(h, id, "Old news")); n != want {
			t.Fatalf("buyer %d got the older broadcast %d times, want %d", id, n, want)
		}
	}
}
