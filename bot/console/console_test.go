package console_test

import (
	"bytes"
	"fmt"
	"image/color"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/fulfil"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// staff are who the gate walk tries every endpoint with: a buyer and each
// role.
var staff = []struct {
	id    int64
	roles flows.Roles
}{{buyer, 0}, {owner, flows.RoleOwner}, {agent, flows.RoleSupport}, {accountant, flows.RoleAccountant}}

// TestConsoleEveryEndpointIsGated walks the staff gate's registry: every
// console endpoint is registered there with its perm, served, and answers
// a buyer and every role whose perms do not allow it 403 (nothing runs),
// while a role that may reaches its handler. Without initData, or with a
// forged download link, nobody gets in.
func TestConsoleEveryEndpointIsGated(t *testing.T) {
	s := newConsoleShop(t, nil)
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitDelivered(o.ID)
	var names []string
	for _, en := range s.b.Engine.AdminEntries() {
		if en.Kind == flows.KindEndpoint {
			names = append(names, en.Name)
		}
	}
	served := s.con.Endpoints()
	slices.Sort(names)
	slices.Sort(served)
	if !slices.Equal(names, served) || len(names) < 20 {
		t.Fatalf("the registry's console endpoints %v, the console serves %v", names, served)
	}
	fill := func(route string, user int64) string {
		r := strings.NewReplacer("{ref}", o.Ref(), "{buyer}", "5001", "{code}", "NOPE", "{id}", "999", "{charge}", "stxNOPE",
			"{token}", s.con.Link(user, "orders today"))
		return r.Replace(route)
	}
	for _, name := range names {
		method, route, _ := strings.Cut(name, " ")
		var perm flows.Perm
		for _, en := range s.b.Engine.AdminEntries() {
			if en.Kind == flows.KindEndpoint && en.Name == name {
				perm = en.Perm
			}
		}
		link := strings.Contains(route, "{token}")
		for _, u := range staff {
			var body any
			if method == "POST" {
				body = map[string]any{}
			}
			var a answer
			if link {
				a = s.call(0, method, fill(route, u.id), body)
			} else {
				a = s.call(u.id, method, fill(route, u.id), body)
			}
			may := u.roles.Can(perm)
			switch {
			case !may && a.status != http.StatusForbidden:
				t.Errorf("%s by %s (%s needed): %d %s, want 403", name, u.roles, perm, a.status, a.raw)
			case may && (a.status == http.StatusForbidden || a.status == http.StatusUnauthorized):
				t.Errorf("%s by %s: %d %s, want its handler", name, u.roles, a.status, a.raw)
			}
		}
		a := s.call(0, method, fill(route, owner), nil)
		if link {
			a = s.call(0, method, strings.Replace(fill(route, owner), ".", ".x", 1), nil)
		}
		if a.status != http.StatusUnauthorized {
			t.Errorf("%s without initData (or with a forged link): %d, want 401", name, a.status)
		}
	}
	// A support agent's refund of the order is refused and changes nothing.
	if got, _ := s.Orders.Get(t.Context(), o.ID); got.Status != state.OrderDelivered || s.StarRefunds(o.ChargeID) != 0 {
		t.Fatalf("the walk moved the order: %s, %d refunds", got.Status, s.StarRefunds(o.ChargeID))
	}
}

// The owner confirms a console refund of a placed order just after the
// upstream completed it: the refund (fulfil's, the chat's own) re-reads
// the upstream order and refuses; the buyer gets the goods, no Stars back.
func TestConsoleRefundRacingAnUpstreamCompletionDelivers(t *testing.T) {
	s := newConsoleShop(t, func(c *fulfil.Config) { c.PollMin, c.PollMax = time.Hour, time.Hour })
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	page := s.call(owner, "GET", "orders/"+o.Ref(), nil).ok(t)
	if !slices.Contains(page.body["actions"].([]any), any("refund")) {
		t.Fatalf("the owner's page of a placed order offers %v", page.body["actions"])
	}
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	a := s.call(owner, "POST", "orders/"+o.Ref()+"/refund", map[string]string{"from": state.OrderPlaced})
	// Refused: the upstream read again says completed, or (on a loaded
	// machine) the worker already moved the order on from what the owner saw.
	if a.status != http.StatusConflict || !strings.Contains(a.raw, "delivered_meanwhile") && !strings.Contains(a.raw, `"changed"`) {
		t.Fatalf("the refund answered %d %s", a.status, a.raw)
	}
	got := s.WaitDelivered(o.ID)
	if n := s.StarRefunds(got.ChargeID); n != 0 {
		t.Fatalf("%d refunds of a delivered order", n)
	}
}

// A console refund and the upstream's completion at the same moment: the
// order ends delivered with no refund, or refunded with exactly one, never
// both (run with -race).
func TestConsoleRefundVersusDeliveryRace(t *testing.T) {
	s := newConsoleShop(t, nil)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Sim.CompleteOrder(int(placed.UpstreamNumber))
	}()
	a := s.call(owner, "POST", "orders/"+o.Ref()+"/refund", map[string]string{"from": state.OrderPlaced})
	wg.Wait()
	if a.status != http.StatusOK && a.status != http.StatusConflict {
		t.Fatalf("the refund answered %d %s", a.status, a.raw)
	}
	end := s.WaitStatusIn(o.ID, state.OrderDelivered, state.OrderRefunded)
	s.WaitTold(o.ID)
	switch n := s.StarRefunds(o.ChargeID); {
	case end.Status == state.OrderDelivered && n != 0, end.Status == state.OrderRefunded && n != 1:
		t.Fatalf("order %s with %d refunds", end.Status, n)
	}
}

// The console's books are the chat's: its balance report is /balance's,
// its 30 days' totals are /stats' (orders, revenue, cost, margin), its
// reconciliation is /reconcile's, for the same data.
func TestConsoleFiguresEqualStatsBalanceAndReconcile(t *testing.T) {
	s := newConsoleShop(t, nil)
	for range 3 {
		o := s.Paid(shoptest.GiftCards(1), state.PayStars)
		s.WaitDelivered(o.ID)
	}
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
	failed := s.Paid(shoptest.GiftCards(2), state.PayStars)
	s.WaitStatus(failed.ID, state.OrderRefunded)

	f := s.call(accountant, "GET", "books/figures?days=30", nil).ok(t)
	total := f.body["total"].(map[string]any)
	stats := locales.Plain(s.Command(s.b, accountant, "stats", "").RawText)
	month := stats[strings.Index(stats, "Last 30 days"):]
	if i := strings.Index(month, "\n\n"); i > 0 {
		month = month[:i]
	}
	money := func(k string) string {
		return locales.Plain(locales.Money(locales.En, decimal.RequireFromString(total[k].(string))))
	}
	for _, k := range []string{"revenue", "cost", "margin"} {
		if !strings.Contains(month, money(k)) {
			t.Errorf("/stats' 30 days do not show the console's %s %s:\n%s", k, money(k), month)
		}
	}
	if total["orders"].(float64) != 4 || total["refunded"].(float64) != 1 || total["delivered"].(float64) != 3 {
		t.Errorf("the console's totals: %v", total)
	}

	bal := s.call(accountant, "GET", "books/balance", nil).ok(t)
	if got := locales.Plain(s.Command(s.b, accountant, "balance", "").RawText); bal.str("report") != got {
		t.Errorf("the console's balance report:\n%s\n/balance:\n%s", bal.str("report"), got)
	}
	if want := s.Sim.Balance().StringFixed(2); bal.str("upstream_usd") != want {
		t.Errorf("the console's upstream balance %s, the upstream's %s", bal.str("upstream_usd"), want)
	}

	rec := s.call(accountant, "GET", "books/reconcile?window=24h", nil).ok(t)
	if got := locales.Plain(s.Command(s.b, accountant, "reconcile", "24h").RawText); rec.str("report") != got {
		t.Errorf("the console's reconciliation:\n%s\n/reconcile:\n%s", rec.str("report"), got)
	}
}

// A CSV download link works once: the second use (or a use racing the
// first) is refused with 410 and no CSV, shared through Redis so another
// replica refuses it too; a new link works again.
func TestConsoleDownloadLinkWorksOnce(t *testing.T) {
	s := newConsoleShop(t, nil)
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitDelivered(o.ID)
	link := func() string {
		a := s.call(accountant, "POST", "books/export", map[string]string{"arg": "orders 30d"}).ok(t)
		return strings.TrimPrefix(a.str("url"), "api/")
	}
	u := link()
	first := s.call(0, "GET", u, nil)
	if first.status != http.StatusOK || !strings.Contains(first.raw, o.ChargeID) {
		t.Fatalf("the first download: %d %q", first.status, first.raw)
	}
	again := s.call(0, "GET", u, nil)
	if again.status != http.StatusGone || strings.Contains(again.raw, o.ChargeID) {
		t.Fatalf("the second download: %d %q, want 410 and no CSV", again.status, again.raw)
	}
	// Two at once: exactly one gets the file.
	u = link()
	var wg sync.WaitGroup
	got := make([]answer, 2)
	for i := range got {
		wg.Go(func() { got[i] = s.call(0, "GET", u, nil) })
	}
	wg.Wait()
	if ok := (got[0].status == http.StatusOK) != (got[1].status == http.StatusOK); !ok || got[0].status+got[1].status != http.StatusOK+http.StatusGone {
		t.Fatalf("two downloads at once: %d and %d, want one 200 and one 410", got[0].status, got[1].status)
	}
}

// The owner adopts an upstream order for an order in review from the
// console, through the chat's code (fulfil's check and Adopt): a number of
// another order, one the upstream does not have and an empty one are
// refused with the reason and change nothing; the right one is shown to
// confirm (it matches the order's request), then adopted, audited as from
// the console, and the order is tracked to delivered. A support agent and
// an accountant are refused both steps (403) and see no adopt button.
func TestConsoleOwnerAdoptsAnUpstreamOrder(t *testing.T) {
	s := newConsoleShop(t, nil)
	other := s.Paid(shoptest.GiftCards(1), state.PayStars)
	other = s.WaitDelivered(other.ID)
	o, ours := s.inReview()
	path := "orders/" + o.Ref() + "/adopt"

	page := s.call(owner, "GET", "orders/"+o.Ref(), nil).ok(t)
	if acts := page.body["actions"].([]any); !slices.Contains(acts, any("adopt")) {
		t.Fatalf("the owner's page of an order in review offers %v", acts)
	}
	for _, who := range []int64{agent, accountant} {
		if acts, _ := s.call(who, "GET", "orders/"+o.Ref(), nil).ok(t).body["actions"].([]any); slices.Contains(acts, any("adopt")) {
			t.Fatalf("%d's page offers adopt: %v", who, acts)
		}
		if a := s.call(who, "GET", path+"?number="+strconv.FormatInt(ours, 10), nil); a.status != http.StatusForbidden {
			t.Fatalf("%d's check: %d %s", who, a.status, a.raw)
		}
		if a := s.call(who, "POST", path, map[string]string{"number": strconv.FormatInt(ours, 10)}); a.status != http.StatusForbidden {
			t.Fatalf("%d's adoption: %d %s", who, a.status, a.raw)
		}
	}
	for _, c := range []struct {
		number, code string
	}{
		{strconv.FormatInt(other.UpstreamNumber, 10), "adopt_claimed"},
		{"99999", "adopt_not_found"},
		{"abc", "bad_request"},
	} {
		if a := s.call(owner, "GET", path+"?number="+c.number, nil); !strings.Contains(a.raw, `"code":"`+c.code+`"`) {
			t.Errorf("checking %s: %d %s, want %s", c.number, a.status, a.raw, c.code)
		}
		if a := s.call(owner, "POST", path, map[string]string{"number": c.number}); !strings.Contains(a.raw, `"code":"`+c.code+`"`) {
			t.Errorf("adopting %s: %d %s, want %s", c.number, a.status, a.raw, c.code)
		}
	}
	if a := s.call(owner, "GET", path+"?number="+strconv.FormatInt(other.UpstreamNumber, 10), nil); !strings.Contains(a.raw, "order #"+strconv.FormatInt(other.ID, 10)) {
		t.Errorf("the refusal does not name the order that owns it: %s", a.raw)
	}
	check := s.call(owner, "GET", path+"?number=%23"+strconv.FormatInt(ours, 10), nil).ok(t)
	if check.body["number"].(float64) != float64(ours) || check.str("match") != "yes" || check.str("type") != "gift_card" {
		t.Fatalf("the check: %s", check.raw)
	}
	if got, _ := s.Orders.Get(t.Context(), o.ID); got.Status != state.OrderNeedsReview {
		t.Fatalf("the check moved the order to %s", got.Status)
	}

	s.call(owner, "POST", path, map[string]string{"number": strconv.FormatInt(ours, 10)}).ok(t)
	got := s.WaitDelivered(o.ID)
	if got.UpstreamNumber != ours {
		t.Fatalf("delivered with upstream %d, want %d", got.UpstreamNumber, ours)
	}
	again := s.call(owner, "POST", path, map[string]string{"number": strconv.FormatInt(ours, 10)})
	if again.status != http.StatusConflict || !strings.Contains(again.raw, `"changed"`) {
		t.Fatalf("adopting again: %d %s", again.status, again.raw)
	}
	audit := s.call(owner, "GET", "audit", nil).ok(t).raw
	if n := strings.Count(audit, `"action":"adopt"`); n != 1 || !strings.Contains(audit, `"via":"console"`) || !strings.Contains(audit, `"upstream `+strconv.FormatInt(ours, 10)+`"`) {
		t.Fatalf("the audit log (%d adoptions): %s", n, audit)
	}
}

// The order search takes a buyer's @username, in any case, in the search
// box or the buyer field: the buyer registry learnt it from the buyer's own
// messages. Lists and the order page show it. After a rename the old name
// finds nobody and the new one the buyer; a name given up and taken by
// another user finds the new holder (and not the old one's orders).
func TestConsoleFindsOrdersByBuyerUsername(t *testing.T) {
	s := newConsoleShop(t, nil)
	s.Fake.SetUser(buyer, types.User{FirstName: "Fan", Username: "Gift_Fan", LanguageCode: "en"})
	s.Command(s.b, buyer, "start", "")
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitDelivered(o.ID)
	refs := func(a answer) []string {
		t.Helper()
		var out []string
		for _, r := range a.ok(t).body["orders"].([]any) {
			row := r.(map[string]any)
			out = append(out, row["ref"].(string)+" @"+fmt.Sprint(row["username"]))
		}
		return out
	}
	want := []string{o.Ref() + " @Gift_Fan"}
	for _, path := range []string{"orders?buyer=@gift_fan", "orders?buyer=%40GIFT_FAN", "orders?q=@Gift_Fan", "orders?q=@gift_fan&status=delivered"} {
		if got := refs(s.call(agent, "GET", path, nil)); !slices.Equal(got, want) {
			t.Errorf("%s found %v, want %v", path, got, want)
		}
	}
	page := s.call(accountant, "GET", "orders/"+o.Ref(), nil).ok(t)
	if u := page.body["order"].(map[string]any)["username"]; u != "Gift_Fan" {
		t.Fatalf("the order page shows the buyer as @%v", u)
	}
	none := s.call(agent, "GET", "orders?buyer=@nobody_here", nil).ok(t)
	if len(none.body["orders"].([]any)) != 0 || none.str("unknown_username") != "nobody_here" {
		t.Fatalf("an unknown username: %s", none.raw)
	}
	if a := s.call(agent, "GET", "orders?buyer=@not-a-name", nil); a.status != http.StatusBadRequest {
		t.Fatalf("a name that is no username: %d %s", a.status, a.raw)
	}

	s.Fake.SetUser(buyer, types.User{FirstName: "Fan", Username: "Card_Fan", LanguageCode: "en"})
	s.SayIn(s.b, buyer, "renamed")
	if got := refs(s.call(agent, "GET", "orders?buyer=@card_fan", nil)); !slices.Equal(got, []string{o.Ref() + " @Card_Fan"}) {
		t.Fatalf("the new name finds %v", got)
	}
	if got := refs(s.call(agent, "GET", "orders?buyer=@gift_fan", nil)); len(got) != 0 {
		t.Fatalf("the old name still finds %v", got)
	}

	const other = buyer + 1
	s.Fake.SetUser(other, types.User{FirstName: "Other", Username: "card_fan", LanguageCode: "en"})
	s.Command(s.b, other, "start", "")
	if got := refs(s.call(agent, "GET", "orders?buyer=@Card_Fan", nil)); len(got) != 0 {
		t.Fatalf("the name taken by another user still finds the old buyer's orders: %v", got)
	}
	if got := refs(s.call(agent, "GET", "orders?q="+fmt.Sprint(o.ID), nil)); !slices.Equal(got, []string{o.Ref() + " @<nil>"}) {
		t.Fatalf("the old buyer's order still shows the name they gave up: %v", got)
	}
}

// A support agent answers a ticket with a photo from the console: a JPEG
// upload goes to the buyer with sendPhoto (the fake Bot API checks the
// call against the schema) with the caption, the thread keeps it, and the
// console shows it (and the buyer's own photo) from Telegram. What is not a
// JPEG or PNG, too large, or of sides Telegram refuses is refused with the
// reason and sends nothing; an accountant is refused (403).
func TestConsoleTicketPhotoReply(t *testing.T) {
	s := newConsoleShop(t, nil)
	s.openTicket("The code does not work")
	shot := botapitest.TestJPEG(64, 48, color.RGBA{R: 200, G: 40, B: 40, A: 255})
	s.Fake.SendPhotoData(buyer, "this is what I see", shot)
	s.WaitText(agent, "this is what I see")
	photos := func() int {
		n := 0
		for _, m := range s.BotMessages(buyer) {
			if m.Method == "sendPhoto" {
				n++
			}
		}
		return n
	}
	before := photos()

	pic := botapitest.TestJPEG(320, 200, color.RGBA{R: 40, G: 160, B: 90, A: 255})
	for _, c := range []struct {
		name string
		data []byte
		text string
		want string
	}{
		{"a.gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "", "JPEG or PNG"},
		{"a.jpg", []byte("not a picture at all"), "", "JPEG or PNG"},
		{"a.jpg", append([]byte{0xff, 0xd8, 0xff}, make([]byte, 5<<20)...), "", "at most 5 MB"},
		{"a.jpg", botapitest.TestJPEG(420, 20, color.RGBA{A: 255}), "", "420×20"},
		{"a.jpg", pic, strings.Repeat("x", 901), "at most 900 characters"},
		{"", nil, "no file", "multipart/form-data"},
	} {
		a := s.upload(agent, "tickets/5001/reply", map[string]string{"text": c.text}, c.name, c.data)
		if a.status != http.StatusBadRequest || !strings.Contains(a.raw, c.want) {
			t.Errorf("uploading %s (%d bytes): %d %s, want 400 with %q", c.name, len(c.data), a.status, a.raw, c.want)
		}
	}
	if a := s.upload(accountant, "tickets/5001/reply", map[string]string{"text": "hi"}, "a.jpg", pic); a.status != http.StatusForbidden {
		t.Fatalf("the accountant's photo: %d %s", a.status, a.raw)
	}
	if n := photos(); n != before {
		t.Fatalf("refused uploads sent %d photos", n-before)
	}

	s.upload(agent, "tickets/5001/reply", map[string]string{"text": "Enter it <exactly> like this"}, "screen.jpg", pic).ok(t)
	sent := s.WaitText(buyer, "Enter it &lt;exactly&gt; like this")
	if sent.Method != "sendPhoto" || !bytes.Equal(sent.FileData, pic) || len(sent.Photo) == 0 {
		t.Fatalf("the buyer got %s with %d bytes, want the photo", sent.Method, len(sent.FileData))
	}
	s.NoViolations()

	th := s.call(agent, "GET", "tickets/5001", nil).ok(t)
	var keys []string
	for _, m := range th.body["messages"].([]any) {
		msg := m.(map[string]any)
		if k, _ := msg["photo_key"].(string); k != "" {
			keys = append(keys, k+" "+fmt.Sprint(msg["from"]))
		}
	}
	if len(keys) != 2 || !strings.HasSuffix(keys[0], " <nil>") || !strings.HasSuffix(keys[1], " "+fmt.Sprint(agent)) {
		t.Fatalf("the thread's photos: %v (%s)", keys, th.raw)
	}
	for i, want := range [][]byte{shot, pic} {
		key, _, _ := strings.Cut(keys[i], " ")
		a := s.call(agent, "GET", "tickets/5001/photos/"+key, nil).ok(t)
		if a.raw != string(want) || a.header.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("photo %d: %s, %d bytes", i, a.header.Get("Content-Type"), len(a.raw))
		}
		if a := s.call(accountant, "GET", "tickets/5001/photos/"+key, nil); a.status != http.StatusForbidden {
			t.Fatalf("the accountant's look at photo %d: %d", i, a.status)
		}
	}
	if a := s.call(agent, "GET", "tickets/5001/photos/0123456789abcdef", nil); a.status != http.StatusNotFound {
		t.Fatalf("an unknown photo: %d", a.status)
	}
	audit := s.call(owner, "GET", "audit", nil).ok(t).raw
	if !strings.Contains(audit, `"action":"ticket.reply"`) {
		t.Fatalf("the photo answer is not audited: %s", audit)
	}
}
