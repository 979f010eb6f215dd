package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"shopbot/flows"
	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
)

// During a rolling upgrade replicas of two builds take updates from one
// intake, and either may claim a chat. An update this build does not
// understand (a conversation a newer build saved, a payment or a
// pre-checkout of an invoice it does not know) is put back in its chat's
// queue, untouched and in order, for a replica of the newer build, as long
// as one runs (redisstore.Replicas). With none running (a rollback) this
// build handles it as well as it can: a conversation is reset politely
// (flows.DecodeSession), a pre-checkout declined, and a payment left
// unsettled for a newer build's Stars sweep (never refunded: checkout).

// skewRetry is about how soon an update left for a newer replica is due
// again, jittered by half either way: a fixed delay would make this
// replica, whose idle polls keep step with its own deferral, claim it
// first again and again, while a newer replica polls at random times.
const skewRetry = 300 * time.Millisecond

// skewPreCheckoutFor bounds how long a pre-checkout query is left for a
// newer replica: Telegram wants its answer within 10 s.
const skewPreCheckoutFor = 4 * time.Second

// skew is the adapter's view of the other builds running beside it.
type skew struct {
	replicas *redisstore.Replicas

	mu    sync.Mutex
	at    time.Time // when newer was last read
	newer bool      // a replica of a newer generation was live then
	first map[int64]time.Time
}

// newerRunning reports whether a replica of a newer schema generation is
// live, read at most once a second.
func (b *Bot) newerRunning(ctx context.Context) bool {
	s := &b.skew
	now := b.opts.Now()
	s.mu.Lock()
	if !s.at.IsZero() && now.Sub(s.at) < time.Second {
		defer s.mu.Unlock()
		return s.newer
	}
	s.mu.Unlock()
	live, err := s.replicas.Live(ctx, time.Now())
	newer := false
	for _, r := range live {
		newer = newer || r.Gen > state.SchemaGen
	}
	if err != nil {
		b.log.Warn("read the running replicas", "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at, s.newer = now, newer
	return newer
}

// notUnderstood says what of the claimed update this build does not
// understand ("" when it understands all of it).
func (b *Bot) notUnderstood(ctx context.Context, c *intake.Claim) string {
	if len(c.Doc) > 0 && bytes.Contains(c.Doc, []byte(`"v":`)) {
		var head struct {
			V int `json:"v"`
		}
		if json.Unmarshal(c.Doc, &head) == nil && head.V > flows.SessionVersion {
			return "conversation"
		}
	}
	if b.features.Checkout == nil || !bytes.Contains(c.Body, []byte(`"invoice_payload"`)) {
		return ""
	}
	var u models.Update
	if decodeUpdate(c.Body, &u) != nil {
		return ""
	}
	payload, what := "", ""
	switch {
	case u.PreCheckoutQuery != nil:
		payload, what = u.PreCheckoutQuery.InvoicePayload, "pre_checkout_query"
	case u.Message != nil && u.Message.SuccessfulPayment != nil:
		payload, what = u.Message.SuccessfulPayment.InvoicePayload, "successful_payment"
	default:
		return ""
	}
	ok, err := b.features.Checkout.Understands(ctx, payload)
	if err != nil {
		b.log.Warn("tell whether this version understands a payment", "update", c.UpdateID, "err", err)
		return "" // handled here: checkout is as careful with it
	}
	if ok {
		return ""
	}
	if what == "pre_checkout_query" && !b.preCheckoutMayWait(c.UpdateID) {
		return ""
	}
	return what
}

// preCheckoutMayWait reports whether pre-checkout query update may still be
// left for a newer replica: for skewPreCheckoutFor since this process first
// met it, so that some replica answers it within Telegram's 10 s.
func (b *Bot) preCheckoutMayWait(update int64) bool {
	s := &b.skew
	now := b.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = map[int64]time.Time{}
	}
	for id, at := range s.first {
		if now.Sub(at) > time.Minute {
			delete(s.first, id)
		}
	}
	at, ok := s.first[update]
	if !ok {
		s.first[update], at = now, now
	}
	return now.Sub(at) < skewPreCheckoutFor
}

// leaveForNewer puts the claimed chat back, due again shortly and with its
// update untouched, when the update is one this build does not understand
// and a replica of a newer build runs; it reports whether it did.
func (b *Bot) leaveForNewer(ctx context.Context, c *intake.Claim) bool {
	what := b.notUnderstood(ctx, c)
	if what == "" {
		return false
	}
	if !b.newerRunning(ctx) {
		b.log.Warn("an update of a newer version, and no replica of a newer version runs; handled by this one", "chat", c.Chat, "update", c.UpdateID, "what", what)
		return false
	}
	wait := skewRetry/2 + rand.N(skewRetry)
	if err := b.Queue.Defer(ctx, c, b.opts.Now().Add(wait)); err != nil {
		b.log.Warn("leave an update for a newer version; its lease lapses instead", "chat", c.Chat, "err", err)
	}
	b.metrics.Updates.WithLabelValues("any", "left_for_newer").Inc()
	b.log.Info("update left for a replica of a newer version", "chat", c.Chat, "update", c.UpdateID, "what", what)
	b.notify()
	return true
}
