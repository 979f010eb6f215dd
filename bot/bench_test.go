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
				"id": fake.Press(c, 1, data), "from": map[string]any{"id": c, "is_bot": false, "first_name": "B"},
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
