package flows

import (
	"context"
	"strings"
	"time"
)

// Sharing: a product is named by its deep link (the /start payload that
// opens it: a line, or <prefix>-<item>), which the inline mode puts on the
// cards it lists and the reviews are kept under. A /start payload may carry
// an invite (the referral program's r<code>) before the deep link:
// r<code>_<deep link>.

// ProductLink is the deep link of a product: the item's for the lines that
// open one item (gc-<id>, key-<id>, game-<id>, tu-<id>, svc-<id>), the
// line's own for the others (stars, premium, topup). category is the item
// a quote's Category names ("" for the lines without one).
func ProductLink(line, category string) string {
	if category != "" {
		for prefix, l := range deepLinkPrefixes {
			if l == line {
				return prefix + "-" + category
			}
		}
	}
	return line
}

// ProductLine returns the line a deep link opens and whether it is one.
func ProductLine(link string) (string, bool) {
	if isLine(link) {
		return link, true
	}
	if prefix, item, ok := strings.Cut(link, "-"); ok && item != "" {
		line, ok := deepLinkPrefixes[prefix]
		return line, ok
	}
	return "", false
}

// MaxStartPayload is how long a /start payload may be (Telegram's limit).
const MaxStartPayload = 64

// invitePrefix starts the invite part of a /start payload (the referral
// program's; bot/referral checks the code itself).
const invitePrefix = "r"

// StartPayload joins an invite (r<code>, or "") and a deep link (or "")
// into one /start payload of at most MaxStartPayload characters of
// Telegram's alphabet. A link that cannot be carried with the invite loses
// the invite; one that cannot be carried at all gives "" (the shop's menu),
// or the invite alone.
func StartPayload(invite, link string) string {
	switch {
	case !startSafe(link) || len(link) > MaxStartPayload:
		if startSafe(invite) && len(invite) <= MaxStartPayload {
			return invite
		}
		return ""
	case link == "":
		return invite
	case invite == "" || !startSafe(invite) || len(invite)+1+len(link) > MaxStartPayload:
		return link
	}
	return invite + "_" + link
}

// ParseStart splits a /start payload into its invite (r<code>, or "") and
// its deep link (or ""), past a broadcast's tag (CutCampaign). A payload
// that is neither is taken as a deep link, which the engine ignores when it
// names nothing.
func ParseStart(payload string) (invite, link string) {
	_, payload = CutCampaign(payload)
	if !strings.HasPrefix(payload, invitePrefix) || isLine(payload) {
		return "", payload
	}
	if head, rest, ok := strings.Cut(payload, "_"); ok {
		if _, isLink := ProductLine(rest); isLink {
			return head, rest
		}
	}
	return payload, ""
}

// campaignPrefix starts a broadcast's tag in a /start payload: bc<id>,
// alone (the shop's menu) or before a deep link (bc<id>_<deep link>). No
// line's name and no deep link's prefix starts so.
const campaignPrefix = "bc"

// CampaignPayload is the /start payload of a broadcast's button: link (a
// deep link, or "" for the shop's menu) tagged as broadcast id's, so that
// whoever starts the bot through it counts as an open of the broadcast. A
// link that cannot be carried gives the tag alone.
func CampaignPayload(id, link string) string {
	tag := campaignPrefix + id
	if link == "" || !startSafe(link) || len(tag)+1+len(link) > MaxStartPayload {
		return tag
	}
	return tag + "_" + link
}

// CutCampaign splits a broadcast's tag off a /start payload: the
// broadcast's id ("" when the payload carries none) and the rest.
func CutCampaign(payload string) (id, rest string) {
	after, ok := strings.CutPrefix(payload, campaignPrefix)
	if !ok {
		return "", payload
	}
	id, rest, _ = strings.Cut(after, "_")
	if id == "" || len(id) > 12 || strings.Trim(id, "0123456789") != "" {
		return "", payload
	}
	return id, rest
}

// startSafe reports whether s uses only what a /start payload may: A-Z,
// a-z, 0-9, _ and -.
func startSafe(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// InlineQuery is what someone typed after the bot's username in any chat
// (Telegram's inline mode): the text, the offset of the page asked for
// (what the previous answer gave as next), who typed it and when.
type InlineQuery struct {
	Text   string
	Offset string
	User   User
	Now    time.Time
}

// Card is one product found for an inline query: what the chat picker
// shows and what the chosen card sends (Text, Telegram HTML), with a button
// that opens Link in the shop.
type Card struct {
	ID          string // unique in one answer, at most 64 bytes
	Link        string // the product's deep link (ProductLink)
	Title       string // plain text
	Description string // plain text: the price, the line
	Text        string // the message the card sends, Telegram HTML
	Image       string // the catalog's image URL, or ""
}

// InlineAnswer is the answer to an inline query: one page of cards and the
// offset of the next page ("" for none). Limited says the user is over the
// rate limit (Wait until the next query is allowed): no cards, and the
// host says so.
type InlineAnswer struct {
	Cards   []Card
	Next    string
	Limited bool
	Wait    time.Duration
}

// InlineFunc answers an inline query.
type InlineFunc func(ctx context.Context, env *Env, q InlineQuery) (*InlineAnswer, error)

// HandleInline registers what answers inline queries (the product lines'
// search across the catalog); without it every query finds nothing.
func (e *Engine) HandleInline(f InlineFunc) { e.inline = f }

// Inline answers an inline query in the language of the user's client
// (an inline query has no chat, hence no chosen language).
func (e *Engine) Inline(ctx context.Context, q InlineQuery) (*InlineAnswer, error) {
	env := &Env{Now: q.Now, User: q.User, Lang: e.LangFor(&Session{}, q.User)}
	if e.inline == nil {
		return &InlineAnswer{}, nil
	}
	return e.inline(ctx, env, q)
}

// InlineEnv is the Env an inline query of user u is answered in: the
// language of their client.
func (e *Engine) InlineEnv(u User, now time.Time) *Env {
	return &Env{Now: now, User: u, Lang: e.LangFor(&Session{}, u)}
}
