package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"shopbot/bot/botapitest"
	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/state/redisstore/intake"
)

// stepClock is a clock that moves only when the test says: a Sleep on it
// blocks until Advance moves the clock past its end, so a worker that
// waits out a flood wait stays held for as long as the test lets it.
type stepClock struct {
	mu    sync.Mutex
	now   time.Time
	moved chan struct{}
}

func newStepClock() *stepClock {
	return &stepClock{now: time.Unix(1_800_000_000, 0), moved: make(chan struct{})}
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		now, moved := c.now, c.moved
		c.mu.Unlock()
		if !now.Before(end) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-moved:
		}
	}
}

func (c *stepClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	close(c.moved)
	c.moved = make(chan struct{})
	c.mu.Unlock()
}

// Buyers flooding their chats past Telegram's per-chat limit (429 with a
// 10 s retry_after) hold no worker: with more such chats than workers, an
// unrelated buyer's /start and pre-checkout query are answered while every
// flood wait still holds, on a clock that never moves meanwhile. The
// flooded chats' updates wait in their queues and are all handled once
// the waits end.
func TestFloodWaitedChatDoesNotHoldWorkers(t *testing.T) {
	clk := newStepClock()
	h := &harness{Harness: bottest.New(t, botapitest.WithClock(clk.Now)), t: t}
	h.fake, h.rdb = h.Fake, h.Rdb
	b := h.newBot(func(o *storefront.Options) { o.Now, o.Workers = clk.Now, 4 })
	b.API.Now, b.API.Sleep = clk.Now, clk.Sleep
	b.Queue.Lease = time.Hour // the test moves the clock: no lease may lapse meanwhile
	h.fake.ChatFloodLimit(3, time.Second, 10*time.Second)
	h.run(b)

	const flooded, each = 8, 6 // twice as many flooded chats as workers
	for range each {
		for c := range int64(flooded) {
			h.fake.SendCommand(100+c, "help", "")
		}
	}
	refused := func(chat int64) int {
		n := 0
		for _, c := range h.fake.Calls() {
			if c.ErrorCode == 429 && c.Int("chat_id") == chat {
				n++
			}
		}
		return n
	}
	if !h.until(func() bool {
		for c := range int64(flooded) {
			if refused(100+c) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatal("not every flooded chat met its flood wait: the workers are held by the others")
	}

	const other = 777
	h.fake.SendCommand(other, "start", "")
	pcq := h.fake.PushPreCheckout(other+1, "XTR", 100, "q:unknown")
	if !h.until(func() bool {
		answered, _ := h.fake.PreCheckoutAnswer(pcq)
		return answered && len(h.BotMessages(other)) > 0
	}) {
		t.Fatalf("with %d chats in a flood wait, an unrelated /start and pre-checkout were not answered", flooded)
	}
	if n, _ := b.Queue.Pending(context.Background()); n == 0 {
		t.Fatal("the flooded chats' updates were handled during their flood waits")
	}

	// The waits end; the chats' updates are handled, a flood wait at a time.
	pending := func() int64 { n, _ := b.Queue.Pending(context.Background()); return n }
	total429 := func() int {
		n := 0
		for _, c := range h.fake.Calls() {
			if c.ErrorCode == 429 {
				n++
			}
		}
		return n
	}
	// Each round moves the clock past the flood waits and waits until the
	// chats met new ones or drained, or for a second: a chat whose held
	// replies still go out is deferred on the clock and waits for the next
	// round (the clock moves only when the test moves it).
	for round := 0; pending() > 0; round++ {
		if round == 20*each {
			t.Fatalf("%d chats still have updates queued", pending())
		}
		before := total429()
		clk.Advance(11 * time.Second)
		h.UntilWithin(time.Second, func() bool { return pending() == 0 || total429() > before })
	}
	for c := range int64(flooded) { // none lost: the refused ones went out after the wait
		if len(h.BotMessages(100+c)) != each {
			t.Errorf("chat %d got %d answers to %d commands", 100+c, len(h.BotMessages(100+c)), each)
		}
	}
	h.noViolations()
}

// A pre-checkout query is answered while the buyer's chat is held: by a
// worker busy with another update of the chat, or by a worker that died
// holding it (its lease still running). Telegram waits 10 s for the answer.
func TestPreCheckoutAnsweredWhileChatIsBusy(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	b.SetTestHook(func(u *models.Update) {
		if u.Message != nil && u.Message.Text == "/slow" {
			entered <- struct{}{}
			<-release
		}
	})
	// Chat 42's update is claimed by a worker that then dies.
	const dead = 42
	u := h.fake.SendCommand(dead, "help", "")
	raw, _ := json.Marshal(u)
	q := intake.NewQueue(h.rdb.Client, h.rdb.Prefix)
	q.Lease = time.Hour
	if _, err := q.Accept(context.Background(), []intake.Update{{ID: u.UpdateID, Chat: dead, Body: raw}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c, err := q.Claim(context.Background(), time.Now()); c == nil || err != nil {
		t.Fatalf("claim: %v %v", c, err)
	}
	h.run(b)

	t.Run("busy", func(t *testing.T) {
		h.fake.SendText(chat, "/slow")
		select {
		case <-entered:
		case <-time.After(bottest.WaitLimit):
			t.Fatal("the slow update never started")
		}
		id := h.fake.PushPreCheckout(chat, "XTR", 100, "q:unknown")
		if !h.until(func() bool { answered, _ := h.fake.PreCheckoutAnswer(id); return answered }) {
			t.Fatal("the pre-checkout waited behind the busy chat")
		}
		free()
	})
	t.Run("held by a dead worker", func(t *testing.T) {
		id := h.fake.PushPreCheckout(dead, "XTR", 100, "q:unknown")
		if !h.until(func() bool { answered, _ := h.fake.PreCheckoutAnswer(id); return answered }) {
			t.Fatal("the pre-checkout waited for the dead worker's lease")
		}
	})
	h.noViolations()
}

// A webhook flood of one chat's updates is bounded: past the queue's bound
// new messages are dropped and counted, while a payment and a pre-checkout
// query of that chat are still queued.
func TestChatQueueIsBoundedAndKeepsPayments(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil) // not running: the test reads the queue itself
	ctx := context.Background()
	accept := func(body string) {
		t.Helper()
		if err := b.AcceptRaw(ctx, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(id int, extra string) string {
		return fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1700000000,"chat":{"id":%d,"type":"private"},"from":{"id":%d,"is_bot":false,"first_name":"B"}%s}}`, id, id, chat, chat, extra)
	}
	const flood = 3 * intake.DefaultMaxQueue
	for id := 1; id <= flood; id++ {
		accept(msg(id, `,"text":"spam"`))
	}
	accept(msg(flood+1, `,"successful_payment":{"currency":"XTR","total_amount":10,"invoice_payload":"q:x","telegram_payment_charge_id":"stx1","provider_payment_charge_id":""}`))
	accept(fmt.Sprintf(`{"update_id":%d,"pre_checkout_query":{"id":"pcq1","from":{"id":%d,"is_bot":false,"first_name":"B"},"currency":"XTR","total_amount":10,"invoice_payload":"q:x"}}`, flood+2, chat))

	var bodies []string
	for c, _ := b.Queue.Claim(ctx, time.Now()); c != nil; c, _ = b.Queue.Claim(ctx, time.Now()) {
		for {
			bodies = append(bodies, string(c.Body))
			next, err := b.Queue.Done(ctx, c, false, nil, true, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !next {
				break
			}
		}
	}
	if len(bodies) != intake.DefaultMaxQueue+2 {
		t.Fatalf("queued %d updates, want the bound %d and the two payment updates", len(bodies), intake.DefaultMaxQueue)
	}
	var payment, query bool
	for _, body := range bodies {
		payment = payment || strings.Contains(body, "successful_payment")
		query = query || strings.Contains(body, "pre_checkout_query")
	}
	if !payment || !query {
		t.Fatalf("payment queued %v, pre-checkout queued %v", payment, query)
	}
	rec := httptest.NewRecorder()
	b.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := fmt.Sprintf(`shopbot_updates_total{kind="any",result="over_bound"} %d`, flood-intake.DefaultMaxQueue); !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("the metrics do not show %s", want)
	}
}
