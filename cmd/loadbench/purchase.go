package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
)

// The purchase mode (-purchases N): N paid gift-card purchases through the
// chat, a few buyers at a time, against an upstream that completes an order
// at its second status read. It times each purchase from the payment (the
// successful_payment Telegram sends) to the codes in the buyer's chat, and
// counts the upstream status reads. The shop runs twice in one run: as
// shipped, and with UPSTREAM_POLL_FIRST=2s (the second read 2 s after the
// first, as before that setting) as the baseline.

// purchaseItem is what every buyer buys: the menu path and the item.
var purchaseItem = struct {
	line  string
	steps []string
	label string
}{line: "giftcards", steps: []string{"Apple", "US"}, label: "Apple Gift Card 10 USD"}

// purchaseBuyer is the first buyer of the purchase mode.
const purchaseBuyer = 7_000_000

// codeRe finds the simulator's gift-card codes in a message.
var codeRe = regexp.MustCompile(`\b[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}\b`)

// purchaseResult is one run of the purchase mode.
type purchaseResult struct {
	name    string
	paid    int
	failed  int             // purchases that did not reach their codes
	toCodes []time.Duration // payment to codes in the chat, sorted
	reads   int64           // upstream status reads (GET /orders/{number})
	cpu     time.Duration
	redis   redisCounters // what Redis did during the run
	elapsed time.Duration
	// idleOpsRate is Redis's commands a second with the shop idle, before
	// the purchases.
	idleOpsRate float64
}

// netOps is the Redis commands per purchase but for the shop's idle rate
// over the run.
func (r purchaseResult) netOps() float64 {
	if r.paid == 0 {
		return 0
	}
	return (float64(r.redis.ops) - r.idleOpsRate*r.elapsed.Seconds()) / float64(r.paid)
}

func (r purchaseResult) pct(p float64) time.Duration {
	if len(r.toCodes) == 0 {
		return 0
	}
	return r.toCodes[min(len(r.toCodes)-1, int(p*float64(len(r.toCodes))))]
}

// readCounter counts the upstream's status reads by number.
type readCounter struct {
	next  http.Handler
	reads atomic.Int64
}

var orderPath = regexp.MustCompile(`/orders/\d+$`)

func (h *readCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && orderPath.MatchString(r.URL.Path) {
		h.reads.Add(1)
	}
	h.next.ServeHTTP(w, r)
}

// measurePurchases runs the purchase mode against the shop binary: as
// shipped, then the baseline.
func measurePurchases(ctx context.Context, c config, rdb redis.UniversalClient, shopBin, upstreamURL string, sim *resellersim.Sim, reads *readCounter) ([]purchaseResult, error) {
	sim.SetBehavior(resellersim.LineGiftCard, resellersim.Behavior{Mode: resellersim.Complete, CompleteOnRead: 2})
	sim.SetBalance(decimal.NewFromInt(1_000_000))
	sim.SetStock(simcatalog.DemoGiftCard, 1_000_000) // Apple Gift Card 10 USD: never sold out here
	var out []purchaseResult
	for _, run := range []struct {
		name, log string
		env       []string
	}{
		{"shop purchases (as shipped)", "purchases-shipped.log", nil},
		{"shop purchases, UPSTREAM_POLL_FIRST=2s (baseline)", "purchases-baseline.log", []string{"UPSTREAM_POLL_FIRST=2s"}},
	} {
		fmt.Fprintf(os.Stderr, "running %s: %d purchases, %d buyers at a time...\n", run.name, c.purchases, c.purchaseBuyers)
		r, err := purchaseRun(ctx, c, rdb, run.name, filepath.Join(c.logDir, run.log), shopBin, upstreamURL, reads, run.env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", run.name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// purchaseRun starts the shop, has the buyers make c.purchases purchases
// and stops it.
func purchaseRun(ctx context.Context, c config, rdb redis.UniversalClient, label, logPath, shopBin, upstreamURL string, reads *readCounter, env []string) (purchaseResult, error) {
	res := purchaseResult{name: label}
	fake, err := botapitest.New(botapitest.WithToken(token), botapitest.OnViolation(func(err error) {
		fmt.Fprintln(os.Stderr, "Bot API schema violation:", err)
	}))
	if err != nil {
		return res, err
	}
	defer fake.Close()
	if err := clearRedis(ctx, rdb); err != nil {
		return res, err
	}
	bp, err := startBot(ctx, c, fake, upstreamURL, []string{shopBin, "run"}, env, logPath)
	if err != nil {
		return res, err
	}
	defer bp.stop()
	addr, cmd := bp.addr, bp.cmd
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	go feed(feedCtx, fake, "http://"+addr+hookPath)
	codes := watchCodes(fake)
	defer codes.stop()

	cpu0, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	reads0 := reads.reads.Load()
	if c.idle > 0 {
		// The shop's background work (its workers' polls, its jobs) goes
		// on through the purchases: its rate idle is taken off the run's
		// commands for the purchases' own.
		idle0, err := readCounters(ctx, rdb)
		if err != nil {
			return res, err
		}
		start := time.Now()
		sleep(ctx, c.idle)
		idle1, err := readCounters(ctx, rdb)
		if err != nil {
			return res, err
		}
		res.idleOpsRate = float64(idle1.since(idle0).ops) / time.Since(start).Seconds()
	}
	redis0, err := readCounters(ctx, rdb)
	if err != nil {
		return res, err
	}
	start := time.Now()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		left atomic.Int64
	)
	left.Store(int64(c.purchases))
	for range c.purchaseBuyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := left.Add(-1); n >= 0 && ctx.Err() == nil; n = left.Add(-1) {
				// Each purchase is another buyer's, as in a shop: one
				// buyer's purchases back to back would meet Telegram's
				// pace of a message a second in a chat and the shop's
				// rate limit, not the shop's speed.
				chat := int64(purchaseBuyer) + n
				took, err := purchase(ctx, fake, codes, chat, c.timeout)
				mu.Lock()
				if err != nil {
					res.failed++
					if res.failed <= 3 {
						fmt.Fprintf(os.Stderr, "buyer %d: %v\n", chat, err)
					}
				} else {
					res.paid++
					res.toCodes = append(res.toCodes, took)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	cpu1, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	res.reads = reads.reads.Load() - reads0
	redis1, err := readCounters(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.redis = redis1.since(redis0)
	slices.Sort(res.toCodes)
	return res, ctx.Err()
}

// purchase walks the buyer through the gift-card menus to the invoice,
// pays it and waits for the codes; it returns payment to codes.
func purchase(ctx context.Context, fake *botapitest.Server, codes *codeWatch, chat int64, timeout time.Duration) (time.Duration, error) {
	it := purchaseItem
	from := lastID(fake, chat)
	fake.SendCommand(chat, it.line, "")
	path := append(append([]string{}, it.steps...), it.label, "1", "💳")
	for _, label := range path {
		m, err := waitScreen(ctx, fake, chat, from, timeout, func(m types.Message) bool { return !rating(m) && button(m, label) != "" })
		if err != nil {
			last, _ := fake.LastMessage(chat)
			var labels []string
			for _, b := range last.ReplyMarkup.Buttons() {
				labels = append(labels, b.Text)
			}
			return 0, fmt.Errorf("at %q: %w; the chat shows %q %q", label, err, last.Text, labels)
		}
		from = m.MessageID
		fake.Press(chat, m.MessageID, button(m, label))
	}
	inv, err := waitScreen(ctx, fake, chat, from, timeout, func(m types.Message) bool { return m.Invoice != nil })
	if err != nil {
		return 0, fmt.Errorf("no invoice: %w", err)
	}
	wait := codes.expect(chat)
	pay, err := fake.Pay(ctx, chat, inv.MessageID, botapitest.PayOptions{})
	if err != nil || pay.Declined {
		return 0, fmt.Errorf("pay: %v %s", err, pay.ErrorMessage)
	}
	paid := time.Now()
	select {
	case at := <-wait:
		return at.Sub(paid), nil
	case <-time.After(timeout):
		return 0, fmt.Errorf("no codes within %v of the payment", timeout)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// button returns the callback data of m's button whose label starts with
// label ("" when none).
func button(m types.Message, label string) string {
	var prefixed string
	for _, b := range m.ReplyMarkup.Buttons() {
		switch {
		case b.CallbackData == "":
		case b.Text == label:
			return b.CallbackData
		case prefixed == "" && strings.HasPrefix(b.Text, label):
			prefixed = b.CallbackData
		}
	}
	return prefixed
}

// rating reports whether m asks to rate an earlier purchase (its stars
// are not the quantity's buttons).
func rating(m types.Message) bool {
	for _, b := range m.ReplyMarkup.Buttons() {
		if strings.Contains(b.CallbackData, ":rv:") { // bot/reviews' ActRate
			return true
		}
	}
	return false
}

// lastID is the id of the chat's newest message.
func lastID(fake *botapitest.Server, chat int64) int {
	m, ok := fake.LastMessage(chat)
	if !ok {
		return 0
	}
	return m.MessageID
}

// waitScreen waits for a bot message in chat, newer than message from or
// edited since, for which ok holds.
func waitScreen(ctx context.Context, fake *botapitest.Server, chat int64, from int, timeout time.Duration, ok func(types.Message) bool) (types.Message, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		msgs := fake.MessagesIn(chat)
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].MessageID >= from && ok(msgs[i]) {
				return msgs[i], nil
			}
		}
		sleep(ctx, 10*time.Millisecond)
		if ctx.Err() != nil {
			return types.Message{}, ctx.Err()
		}
	}
	return types.Message{}, errors.New("not shown in time")
}

// codeWatch tells a buyer waiting for codes when a message carrying them
// reached the chat (the fake's record of the call, not our polling).
type codeWatch struct {
	mu    sync.Mutex
	chats map[int64]chan time.Time
	stop  func()
}

func watchCodes(fake *botapitest.Server) *codeWatch {
	calls, stop := fake.Subscribe()
	w := &codeWatch{chats: map[int64]chan time.Time{}, stop: stop}
	go func() {
		for c := range calls {
			if !c.OK() {
				continue
			}
			var text string
			switch c.Method {
			case "sendMessage", "editMessageText":
				text = c.String("text")
			case "sendDocument", "sendPhoto", "editMessageCaption":
				text = c.String("caption")
				for _, f := range c.Files {
					text += "\n" + string(f.Data)
				}
			default:
				continue
			}
			if !codeRe.MatchString(text) {
				continue
			}
			w.mu.Lock()
			ch := w.chats[c.Int("chat_id")]
			delete(w.chats, c.Int("chat_id"))
			w.mu.Unlock()
			if ch != nil {
				ch <- c.At
			}
		}
	}()
	return w
}

// expect returns the channel that gets the time the chat's next codes
// arrive.
func (w *codeWatch) expect(chat int64) <-chan time.Time {
	ch := make(chan time.Time, 1)
	w.mu.Lock()
	w.chats[chat] = ch
	w.mu.Unlock()
	return ch
}

// feed delivers the fake's queued updates to the bot's webhook, each
// chat's in order, as Telegram does.
func feed(ctx context.Context, fake *botapitest.Server, url string) {
	client := &http.Client{Timeout: 30 * time.Second}
	var mu sync.Mutex
	busy, inflight := map[int64]bool{}, map[int64]bool{}
	freed := make(chan struct{}, 1)
	for ctx.Err() == nil {
		changed := fake.UpdatesChanged()
		blocked := map[int64]bool{}
		for _, u := range fake.QueuedUpdates() {
			chat := updateChat(u.Raw)
			mu.Lock()
			if inflight[u.ID] || busy[chat] || blocked[chat] {
				mu.Unlock()
				blocked[chat] = true
				continue
			}
			inflight[u.ID], busy[chat] = true, true
			mu.Unlock()
			go func() {
				for ctx.Err() == nil {
					if postRaw(ctx, client, url, u.Raw) == nil {
						fake.ConfirmUpdate(u.ID)
						break
					}
					sleep(ctx, 100*time.Millisecond)
				}
				mu.Lock()
				delete(inflight, u.ID)
				delete(busy, chat)
				mu.Unlock()
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-freed:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// chatRe finds an update's chat (or user) id.
var chatRe = regexp.MustCompile(`"(?:chat|from)":\{"id":(-?\d+)`)

// updateChat returns the chat an update belongs to (0 when it names none).
func updateChat(raw []byte) int64 {
	m := chatRe.FindSubmatch(raw)
	if m == nil {
		return 0
	}
	var id int64
	_, _ = fmt.Sscan(string(m[1]), &id)
	return id
}

// postRaw posts one update to the webhook.
func postRaw(ctx context.Context, client *http.Client, url string, raw []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	return nil
}

// reportPurchases prints the purchase mode's figures and the ratio of the
// shipped shop to the baseline.
func reportPurchases(w io.Writer, c config, rdbInfo string, rs []purchaseResult) {
	fmt.Fprintf(w, "\n%d gift-card purchases, %d buyers at a time; the upstream completes an order at its second status read; Redis: %s\n\n", c.purchases, c.purchaseBuyers, rdbInfo)
	fmt.Fprintf(w, "| run | paid | failed | payment to codes p50 | p99 | max | status reads per order | CPU per purchase | Redis ops per purchase | the same but for the idle shop's (ops/s) | Redis CPU per purchase |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		per, ops := 0.0, 0.0
		var cpu, rcpu time.Duration
		if r.paid > 0 {
			per = float64(r.reads) / float64(r.paid)
			ops = float64(r.redis.ops) / float64(r.paid)
			cpu, rcpu = r.cpu/time.Duration(r.paid), r.redis.cpu/time.Duration(r.paid)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %v | %v | %v | %.1f | %v | %.0f | %.0f (%.0f) | %v |\n", r.name, r.paid, r.failed,
			r.pct(0.50).Round(time.Millisecond), r.pct(0.99).Round(time.Millisecond), r.pct(1).Round(time.Millisecond), per, cpu.Round(time.Microsecond),
			ops, r.netOps(), r.idleOpsRate, rcpu.Round(time.Microsecond))
	}
	for _, r := range rs {
		if warn := r.redis.shared(); warn != "" {
			fmt.Fprintf(w, "%s:%s\n", r.name, warn)
		}
	}
	if len(rs) > 0 && rs[0].paid > 0 {
		fmt.Fprintf(w, "\nRedis commands per purchase (%s; the walk through the menus, the payment, the fulfilment and its jobs): %s\n", rs[0].name, rs[0].redis.top(8, float64(rs[0].paid)))
	}
	if len(rs) == 2 {
		fmt.Fprintf(w, "\nshipped / baseline: payment to codes p50 %.2fx, p99 %.2fx\n", ratio(rs[0].pct(0.50), rs[1].pct(0.50)), ratio(rs[0].pct(0.99), rs[1].pct(0.99)))
	}
}
