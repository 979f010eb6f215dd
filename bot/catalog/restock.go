package catalog

import (
	"context"
	"time"

	"shopbot/flows"
	"shopbot/state/redisstore/records"
)

// Restock is the flows' view of the restock store (flows.Restock).
type Restock struct {
	Store *records.Restock
	Now   func() time.Time // nil: time.Now
}

// Watch records that the buyer waits for the item.
func (r Restock) Watch(ctx context.Context, w flows.Watch) (bool, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	return r.Store.Watch(ctx, records.RestockItem{Line: w.Line, Category: w.Category, Item: w.Item},
		records.Watcher{User: w.User, Chat: w.Chat, Lang: w.Lang, Name: w.Name, Since: now()})
}
