package bot

import (
	"context"
	"sync"
	"time"
)

// The buyer profiles that broadcasts choose their audiences from
// (records.Users, profiles.go there) are kept as buyers use the bot: the
// language they use it in and the day they last did, written once a day
// per buyer and process, or when the language changes, so an update costs
// no write at all most of the time. Their purchases are recorded as their
// orders are delivered (package storefront).

// seenMark is what this process last wrote of a buyer's profile.
type seenMark struct {
	day  int64
	lang string
}

// seenLog is the marks this process wrote; forgotten in full once it
// holds maxSeen buyers (the next update of each writes once more).
type seenLog struct {
	mu    sync.Mutex
	marks map[int64]seenMark
}

const maxSeen = 100_000

// noteSeen records that user used the bot at now in lang, unless this
// process already wrote as much today. A failure is logged: a profile is
// never worth failing an update for.
func (b *Bot) noteSeen(ctx context.Context, user int64, lang string, now time.Time) {
	if user == 0 {
		return
	}
	m := seenMark{day: now.Unix() / 86400, lang: lang}
	b.seen.mu.Lock()
	if b.seen.marks == nil || len(b.seen.marks) >= maxSeen {
		b.seen.marks = map[int64]seenMark{}
	}
	if b.seen.marks[user] == m {
		b.seen.mu.Unlock()
		return
	}
	b.seen.marks[user] = m
	b.seen.mu.Unlock()
	if err := b.Users.Seen(ctx, user, lang, now); err != nil {
		b.log.Warn("record buyer profile", "user", user, "err", err)
		b.seen.mu.Lock()
		delete(b.seen.marks, user) // written next time
		b.seen.mu.Unlock()
	}
}
