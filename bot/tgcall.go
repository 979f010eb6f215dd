package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	tgbot "github.com/go-telegram/bot"
)

// The hot calls (answers, menus, messages) go to the Bot API as one JSON
// body on a kept-alive connection. go-telegram/bot streams every request
// as a multipart form through a pipe and a goroutine, which the HTTP
// client sends chunked, a write per form part; on the update path that
// cost more CPU than the rest of the update. Calls with files stay on
// go-telegram/bot.

// callJSON posts params as JSON to method and decodes the result into dest
// (nil: not decoded). Errors are go-telegram/bot's, so Do treats both
// transports alike.
func (a *API) callJSON(ctx context.Context, method string, params, dest any) error {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufPool.Put(buf) }()
	if err := json.NewEncoder(buf).Encode(params); err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+method, bytes.NewReader(buf.Bytes()))
	if err != nil {
		return fmt.Errorf("%s: %s", method, scrub(err.Error(), a.token))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s", method, scrub(err.Error(), a.token))
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, io.LimitReader(resp.Body, 16<<20)); err != nil {
		return fmt.Errorf("%s: read answer: %w", method, err)
	}
	var r apiAnswer
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		return fmt.Errorf("%s: decode answer (HTTP %d): %w", method, resp.StatusCode, err)
	}
	if !r.OK {
		return r.err(method)
	}
	if dest != nil {
		if err := json.Unmarshal(r.Result, dest); err != nil {
			return fmt.Errorf("%s: decode result: %w", method, err)
		}
	}
	return nil
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

type apiAnswer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	Description string          `json:"description"`
	ErrorCode   int             `json:"error_code"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// err maps a refusal to go-telegram/bot's errors.
func (r *apiAnswer) err(method string) error {
	switch r.ErrorCode {
	case http.StatusForbidden:
		return fmt.Errorf("%w, %s", tgbot.ErrorForbidden, r.Description)
	case http.StatusBadRequest:
		return fmt.Errorf("%w, %s", tgbot.ErrorBadRequest, r.Description)
	case http.StatusUnauthorized:
		return fmt.Errorf("%w, %s", tgbot.ErrorUnauthorized, r.Description)
	case http.StatusNotFound:
		return fmt.Errorf("%w, %s", tgbot.ErrorNotFound, r.Description)
	case http.StatusConflict:
		return fmt.Errorf("%w, %s", tgbot.ErrorConflict, r.Description)
	case http.StatusTooManyRequests:
		return &tgbot.TooManyRequestsError{
			Message:    fmt.Sprintf("%s, %s", tgbot.ErrorTooManyRequests, r.Description),
			RetryAfter: r.Parameters.RetryAfter,
		}
	default:
		return fmt.Errorf("%s: telegram answered %d %s", method, r.ErrorCode, r.Description)
	}
}

// sentMessage is the part of a sent Message the shop reads.
type sentMessage struct {
	ID int `json:"message_id"`
}
