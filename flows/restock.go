package flows

import "context"

// Restock keeps who waits for a sold-out item: Watch records that the
// buyer wants one message when it is back in stock (bot/restock sends
// it, once, then forgets the watch). ok is false when they watch it
// already.
type Restock interface {
	Watch(ctx context.Context, w Watch) (ok bool, err error)
}

// Watch is a buyer waiting for a sold-out item of a line's category (a
// gift card, a game key), in the language they browse in.
type Watch struct {
	User, Chat int64
	Lang       string
	Line       string
	Category   string
	Item       string
	Name       string // the item's name as shown, unescaped
}
