package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/bot"
	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state/statetest"
)

// countHook counts Redis round trips (a pipeline counts once).
type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

// BenchmarkUpdate measures one callback-query update through the whole
// path: durable accept, chat lease + state load, the engine, one Bot API
// call (answerCallbackQuery) to the fake server, and the state save.
func BenchmarkUpdate(b *testing.B) {
	fake, err := botapitest.New()
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	r := statetest.New(b)
	hook := &countHook{}
	r.Client.AddHook(hook)
	engine := flows.NewEngine(nil, locales.En)
	var handled atomic.Int64
	changed := make(chan struct{}, 1) // an update was handled
	engine.HandleButton("ping", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		s.Set("pings", fmt.Sprint(len(s.Get("pings"))+1))
		handled.Add(1)
		return &flows.Reply{Answer: "pong", Save: true, NoScreen: true}, nil
	})
	bt, err := storefront.New(storefront.Options{Options: bot.Options{
		Token: fake.Token(), APIURL: fake.URL(), Prefix: r.Prefix, Workers: 16, IdlePoll: time.Millisecond,
		// Webhook mode: no poller, so the fake's own copies of the presses are not fetched.
		WebhookURL: "https://bench.example/hook", WebhookSecret: "s",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Notify: func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}}, r.Client, engine)
	if err != nil {
		b.Fatal(err)
	}
	srv := newLocalServer(b, bt)
	defer srv.close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = bt.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	data, _ := flows.EncodeCallback(flows.GlobalNonce, "ping", "")
	const chats = 1000
	bodies := make([][]byte, b.N)
	for i := range b.N {
		c := int64(i%chats + 1)
		bodies[i], _ = json.Marshal(map[string]any{
			"update_id": i + 1,
			"callback_query": map[string]any{
				"id": fake.Press(c, 1, data), "from": map[string]any{"id": c, "is_bot": false, "first_name": "B", "username": fmt.Sprintf("buyer%d", c)},
				"chat_instance": "1", "data": data,
				"message": map[string]any{"message_id": 1, "date": 0, "chat": map[string]any{"id": c, "type": "private"}},
			},
		})
	}
	hook.n.Store(0)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		srv.deliver(b, bodies[i])
	}
	acceptDone := time.Now()
	for handled.Load() < int64(b.N) {
		<-changed
	}
	for n, _ := bt.Queue.Pending(ctx); n > 0; n, _ = bt.Queue.Pending(ctx) {
		<-changed
	}
	b.ReportMetric(float64(acceptDone.Sub(start).Microseconds())/float64(b.N), "accept-us/update")
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "updates/s")
	b.ReportMetric(float64(hook.n.Load())/float64(b.N), "redis-rt/update")
}

// localServer accepts updates the way the webhook does, without HTTP, so
// the benchmark measures the bot rather than the test's HTTP client.
type localServer struct{ b *storefront.Shop }

func newLocalServer(_ testing.TB, b *storefront.Shop) *localServer { return &localServer{b: b} }
func (s *localServer) close()                                      {}
func (s *localServer) deliver(tb testing.TB, body []byte) {
	if err := s.b.AcceptRaw(context.Background(), body); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkAnswerDuringFloods runs the flood attack: 20 buyers send 25
// commands each at once while Telegram refuses messages to a chat beyond 3
// a second with a 10 s retry_after, and 16 workers. It reports how long an
// unrelated buyer's /start and pre-checkout query then wait for their
// answers (flooded-ms), the same without the limit (calm-ms) and their
// ratio. Telegram cancels a payment whose pre-checkout is not answered
// within 10 s.
func BenchmarkAnswerDuringFloods(b *testing.B) {
	var calm, flooded time.Duration
	for range b.N {
		calm += answerLatency(b, false)
		flooded += answerLatency(b, true)
	}
	b.ReportMetric(float64(calm.Milliseconds())/float64(b.N), "calm-ms")
	b.ReportMetric(float64(flooded.Milliseconds())/float64(b.N), "flooded-ms")
	b.ReportMetric(float64(flooded)/float64(max(calm, time.Millisecond)), "flooded/calm")
}

// answerLatency is how long the unrelated /start and pre-checkout of
// BenchmarkAnswerDuringFloods wait, with or without the flood limit.
func answerLatency(b *testing.B, limit bool) time.Duration {
	b.Helper()
	fake, err := botapitest.New()
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	if limit {
		fake.ChatFloodLimit(3, time.Second, 10*time.Second)
	}
	r := statetest.New(b)
	bt, err := storefront.New(storefront.Options{Options: bot.Options{
		Token: fake.Token(), APIURL: fake.URL(), Prefix: r.Prefix, Workers: 16, IdlePoll: 10 * time.Millisecond,
		WebhookURL: "https://bench.example/hook", WebhookSecret: "s",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}}, r.Client, flows.NewEngine(nil, locales.En))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = bt.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	calls, stop := fake.Subscribe()
	defer stop()
	accept := func(body []byte) {
		if err := bt.AcceptRaw(ctx, body); err != nil {
			b.Fatal(err)
		}
	}
	for range 25 {
		for c := range int64(20) {
			raw, _ := json.Marshal(fake.SendCommand(100+c, "help", ""))
			accept(raw)
		}
	}
	for len(fake.CallsFor("sendMessage")) < 20 { // every flooded chat is being served
		<-calls
	}
	const other = 777
	start := time.Now()
	raw, _ := json.Marshal(fake.SendCommand(other, "start", ""))
	accept(raw)
	id := fake.PushPreCheckout(other, "XTR", 100, "q:unknown")
	accept(fmt.Appendf(nil, `{"update_id":%d,"pre_checkout_query":{"id":%q,"from":{"id":%d,"is_bot":false,"first_name":"B"},"currency":"XTR","total_amount":100,"invoice_payload":"q:unknown"}}`,
		900_000, id, other))
	for {
		answered, _ := fake.PreCheckoutAnswer(id)
		if answered && fromBot(fake.MessagesIn(other)) > 0 {
			return time.Since(start)
		}
		select {
		case <-calls:
		case <-time.After(30 * time.Second):
			b.Fatalf("the unrelated buyer was never answered (flood limit %v, pre-checkout answered %v, %d messages)", limit, answered, fromBot(fake.MessagesIn(other)))
		}
	}
}

// fromBot counts the bot's messages among msgs.
func fromBot(msgs []types.Message) int {
	n := 0
	for _, m := range msgs {
		if m.From != nil && m.From.IsBot {
			n++
		}
	}
	return n
}
