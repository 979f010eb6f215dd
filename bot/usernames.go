package bot

import (
	"context"
	"time"

	"github.com/go-telegram/bot/models"

	"shopbot/flows"
)

// UsernameRefresh is how old the buyer registry's record of a user's
// @username may grow before an update writes it again though unchanged: it
// takes back an index entry another user's stale record held (a name that
// moved away and back while this chat was quiet).
const UsernameRefresh = 24 * time.Hour

// noteUsername keeps the buyer registry's record of the sender's Telegram
// @username current (records.Users.SetUsername), from the messages and
// button presses of their private chat, and reports whether it changed the
// session. The chat's session, which every update loads anyway, remembers
// the name last recorded: an update with the same name (nearly all of
// them) costs a string comparison and no Redis command; a new name, or a
// record older than UsernameRefresh, costs one script, and the session's
// save rides on the update's own. A failed write is logged and tried again
// with the next update.
func (b *Bot) noteUsername(ctx context.Context, chat int64, u *models.Update, s *flows.Session) bool {
	var from *models.User
	switch {
	case u.Message != nil:
		from = u.Message.From
	case u.CallbackQuery != nil:
		from = &u.CallbackQuery.From
	}
	if from == nil || from.ID != chat || from.IsBot {
		return false // a user's own chat only: its session is theirs
	}
	now := b.opts.Now()
	if from.Username == s.Username && !s.UsernameAt.IsZero() && now.Sub(s.UsernameAt) < UsernameRefresh && !now.Before(s.UsernameAt) {
		return false
	}
	if _, err := b.Users.SetUsername(ctx, from.ID, from.Username); err != nil {
		b.log.Warn("record a username", "user", from.ID, "err", err)
		return false
	}
	s.Username, s.UsernameAt = from.Username, now
	return true
}
