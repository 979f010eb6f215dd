package bot

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"shopbot/state/redisstore/intake"
)

// accept stores updates durably; only then may they be acknowledged.
func (b *Bot) accept(ctx context.Context, raws []json.RawMessage) error {
	ups := make([]intake.Update, 0, len(raws))
	for _, raw := range raws {
		id, chat, keep, err := chatKey(raw)
		if err != nil {
			b.log.Warn("dropping an undecodable update", "err", err)
			b.metrics.Updates.WithLabelValues("invalid", "dropped").Inc()
			continue
		}
		ups = append(ups, intake.Update{ID: id, Chat: chat, Body: raw, Keep: keep})
	}
	n, err := b.Queue.Accept(ctx, ups, b.opts.Now())
	if err != nil {
		return err
	}
	if dup := len(ups) - n; dup > 0 {
		b.metrics.Updates.WithLabelValues("any", "duplicate").Add(float64(dup))
	}
	return nil
}

type getUpdatesResponse struct {
	OK          bool              `json:"ok"`
	Result      []json.RawMessage `json:"result"`
	Description string            `json:"description"`
	ErrorCode   int               `json:"error_code"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// poll long-polls getUpdates. The offset moves past an update only after
// the update is durably accepted, so a crash re-fetches it from Telegram.
func (b *Bot) poll(ctx context.Context) {
	var offset int64
	backoff := time.Second
	for ctx.Err() == nil {
		raws, retryAfter, err := b.getUpdates(ctx, offset)
		if err == nil && len(raws) > 0 {
			if err = b.accept(ctx, raws); err == nil {
				offset = nextOffset(raws, offset)
			} else {
				err = fmt.Errorf("accept updates: %w", err)
			}
		}
		if err == nil {
			backoff = time.Second
			continue
		}
		if ctx.Err() != nil {
			return
		}
		wait := backoff
		if retryAfter > 0 {
			wait = retryAfter
		}
		b.log.Warn("getUpdates failed; retrying", "err", err, "retry_in_ms", wait.Milliseconds())
		_ = sleepCtx(ctx, wait)
		backoff = min(backoff*2, 30*time.Second)
	}
}

// nextOffset is one past the highest update_id in raws (undecodable
// updates included, so they do not come back forever).
func nextOffset(raws []json.RawMessage, offset int64) int64 {
	for _, raw := range raws {
		var u struct {
			ID int64 `json:"update_id"`
		}
		if json.Unmarshal(raw, &u) == nil && u.ID >= offset {
			offset = u.ID + 1
		}
	}
	return offset
}

func (b *Bot) getUpdates(ctx context.Context, offset int64) ([]json.RawMessage, time.Duration, error) {
	body, _ := json.Marshal(map[string]any{
		"offset": offset, "timeout": int(b.opts.PollTimeout / time.Second), "allowed_updates": allowedUpdates,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.opts.APIURL+"/bot"+b.opts.Token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, 0, errors.New("build getUpdates request")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.opts.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL carries the token
		}
		b.metrics.BotAPI.WithLabelValues("getUpdates", "error").Inc()
		return nil, 0, fmt.Errorf("getUpdates: %w", err)
	}
	defer resp.Body.Close()
	var r getUpdatesResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&r); err != nil {
		b.metrics.BotAPI.WithLabelValues("getUpdates", "error").Inc()
		return nil, 0, fmt.Errorf("getUpdates: decode %s response: %w", resp.Status, err)
	}
	if !r.OK {
		b.metrics.BotAPI.WithLabelValues("getUpdates", fmt.Sprint(r.ErrorCode)).Inc()
		return nil, time.Duration(r.Parameters.RetryAfter) * time.Second,
			fmt.Errorf("getUpdates: %d %s", r.ErrorCode, scrub(r.Description, b.opts.Token))
	}
	b.metrics.BotAPI.WithLabelValues("getUpdates", "ok").Inc()
	return r.Result, 0, nil
}

// webhook accepts one update from Telegram. It answers 401 to a missing or
// wrong secret, and 2xx only once the update is durably accepted, so
// Telegram redelivers anything we could not store.
func (b *Bot) webhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	got := r.Header.Get("X-Telegram-Bot-Api-Secret-Token")
	if b.opts.WebhookSecret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(b.opts.WebhookSecret)) != 1 {
		b.metrics.Updates.WithLabelValues("webhook", "unauthorized").Inc()
		// Close rather than read the unread body before answering (what the
		// server does to keep a connection alive): a stranger trickling a
		// body gets the 401 at once.
		w.Header().Set("Connection", "close")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.opts.HTTPLimits.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			b.metrics.Updates.WithLabelValues("webhook", "too_large").Inc()
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	if err := checkUpdateBody(body); err != nil {
		b.metrics.Updates.WithLabelValues("webhook", "invalid").Inc()
		http.Error(w, "invalid update: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := b.accept(r.Context(), []json.RawMessage{body}); err != nil {
		b.metrics.Updates.WithLabelValues("webhook", "not_stored").Inc()
		b.log.Error("webhook: could not accept update; Telegram will redeliver", "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	b.metrics.Updates.WithLabelValues("webhook", "accepted").Inc()
	w.WriteHeader(http.StatusOK)
}

// checkUpdateBody accepts one JSON object whose update_id is a positive
// integer: anything else (an array, a string, null, update_id missing,
// zero, negative, fractional or a string) is not an update, and storing it
// would make its id 0 look like a duplicate of every later id-less body.
func checkUpdateBody(body []byte) error {
	// A struct with one field: the decoder skips the rest of the update
	// (a callback query carries its whole menu) instead of copying it.
	var head struct {
		ID json.RawMessage `json:"update_id"`
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &head) != nil {
		return errors.New("not one JSON object")
	}
	if head.ID == nil {
		return errors.New("no update_id")
	}
	var id int64
	if err := json.Unmarshal(head.ID, &id); err != nil || id <= 0 {
		return errors.New("update_id is not a positive integer")
	}
	return nil
}

// AcceptRaw durably accepts one raw update, as the webhook does after its
// checks. Tests, benchmarks and the demo feed updates through it.
func (b *Bot) AcceptRaw(ctx context.Context, body []byte) error {
	return b.accept(ctx, []json.RawMessage{body})
}
