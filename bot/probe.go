package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	tgbot "github.com/go-telegram/bot"
)

// Probe asks the Bot API about a token without running the shop (for
// `shopbot check`).
type Probe struct{ tg *tgbot.Bot }

// NewProbe returns a probe of the Bot API at apiURL with token, each call
// bounded by timeout.
func NewProbe(apiURL, token string, timeout time.Duration) (*Probe, error) {
	tg, err := tgbot.New(token, tgbot.WithServerURL(apiURL), tgbot.WithSkipGetMe(),
		tgbot.WithHTTPClient(timeout, &http.Client{Timeout: timeout}))
	if err != nil {
		return nil, err
	}
	return &Probe{tg: tg}, nil
}

// ErrTokenRejected is what Probe's calls return (wrapped) when Telegram
// answers 401 Unauthorized: the token is wrong or was revoked.
var ErrTokenRejected = errors.New("telegram rejected the token")

// probeErr marks a 401 answer with ErrTokenRejected.
func probeErr(err error) error {
	if errors.Is(err, tgbot.ErrorUnauthorized) {
		return fmt.Errorf("%w: %w", ErrTokenRejected, err)
	}
	return err
}

// Me is the bot the token belongs to (getMe).
func (p *Probe) Me(ctx context.Context) (username string, id int64, err error) {
	me, err := p.tg.GetMe(ctx)
	if err != nil {
		return "", 0, probeErr(err)
	}
	return me.Username, me.ID, nil
}

// WebhookInfo is what Telegram says of the bot's webhook.
type WebhookInfo struct {
	URL              string
	LastErrorMessage string
	LastErrorDate    time.Time
	Pending          int // updates waiting for delivery
}

// Webhook reads the bot's webhook (getWebhookInfo).
func (p *Probe) Webhook(ctx context.Context) (WebhookInfo, error) {
	info, err := p.tg.GetWebhookInfo(ctx)
	if err != nil {
		return WebhookInfo{}, probeErr(err)
	}
	return WebhookInfo{
		URL: info.URL, LastErrorMessage: info.LastErrorMessage,
		LastErrorDate: time.Unix(int64(info.LastErrorDate), 0), Pending: info.PendingUpdateCount,
	}, nil
}
