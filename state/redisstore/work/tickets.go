package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Ticket is a buyer's support ticket: one per buyer, open until the buyer
// or an admin closes it.
type Ticket struct {
	Buyer int64
	Open  bool
	Lang  string // the buyer's language when they last wrote
	Name  string // the buyer's name or @username, for admins
	Last  time.Time
}

// Tickets stores support tickets. Keys, under prefix + "support:":
//
//	t:<buyer>          HASH open ("1"/"0"), lang, name, last (unix seconds)
//	open               ZSET open tickets' buyers by last activity (unix seconds)
//	m:<admin>:<msg>    STRING the buyer of a message relayed to an admin,
//	                   so that a reply to it answers them (expires)
//
// The keys are in different cluster slots, so a ticket's hash and its
// place in the open set are written in one pipeline, not one transaction:
// a write that half fails leaves a ticket listed with an older hash, or
// a hash ahead of the list, which the next write of the ticket mends.
type Tickets struct {
	rdb redis.UniversalClient
	p   string
}

// NewTickets returns the ticket store under prefix.
func NewTickets(rdb redis.UniversalClient, prefix string) *Tickets {
	return &Tickets{rdb: rdb, p: prefix + "support:"}
}

func (s *Tickets) key(buyer int64) string { return s.p + "t:" + itoa(buyer) }
func (s *Tickets) openKey() string        { return s.p + "open" }
func (s *Tickets) msgKey(admin int64, msg int) string {
	return s.p + "m:" + itoa(admin) + ":" + strconv.Itoa(msg)
}

// Open opens (or keeps open) the buyer's ticket at at, with the buyer's
// language and name, and moves it to the top of the open tickets.
func (s *Tickets) Open(ctx context.Context, buyer int64, lang, name string, at time.Time) error {
	pipe := s.rdb.Pipeline()
	pipe.HSet(ctx, s.key(buyer), "open", "1", "lang", lang, "name", name, "last", at.Unix())
	pipe.ZAdd(ctx, s.openKey(), redis.Z{Score: float64(at.Unix()), Member: itoa(buyer)})
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("open support ticket %d: %w", buyer, err)
	}
	return nil
}

// Touch records activity on the buyer's ticket at at (an admin answered);
// its place among the open tickets stays.
func (s *Tickets) Touch(ctx context.Context, buyer int64, at time.Time) error {
	if err := s.rdb.HSet(ctx, s.key(buyer), "last", at.Unix()).Err(); err != nil {
		return fmt.Errorf("touch support ticket %d: %w", buyer, err)
	}
	return nil
}

// Get reads the buyer's ticket; ok is false when the buyer never wrote (a
// ticket is known by its name).
func (s *Tickets) Get(ctx context.Context, buyer int64) (t Ticket, ok bool, err error) {
	m, err := s.rdb.HGetAll(ctx, s.key(buyer)).Result()
	if err != nil {
		return Ticket{}, false, fmt.Errorf("read support ticket %d: %w", buyer, err)
	}
	t = ticketOf(buyer, m)
	_, ok = m["name"]
	return t, ok, nil
}

func ticketOf(buyer int64, m map[string]string) Ticket {
	last, _ := strconv.ParseInt(m["last"], 10, 64)
	return Ticket{Buyer: buyer, Open: m["open"] == "1", Lang: m["lang"], Name: m["name"], Last: time.Unix(last, 0)}
}

// Close closes the buyer's ticket and reports whether it was open.
func (s *Tickets) Close(ctx context.Context, buyer int64) (bool, error) {
	pipe := s.rdb.Pipeline()
	n := pipe.ZRem(ctx, s.openKey(), itoa(buyer))
	pipe.HSet(ctx, s.key(buyer), "open", "0")
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("close support ticket %d: %w", buyer, err)
	}
	return n.Val() > 0, nil
}

// OpenTickets lists up to limit open tickets, latest activity first.
func (s *Tickets) OpenTickets(ctx context.Context, limit int) ([]Ticket, error) {
	ids, err := s.rdb.ZRevRange(ctx, s.openKey(), 0, int64(limit)-1).Result()
	if err != nil {
		return nil, fmt.Errorf("list support tickets: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	docs := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		docs[i] = pipe.HGetAll(ctx, s.p+"t:"+id)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("list support tickets: %w", err)
	}
	out := make([]Ticket, len(ids))
	for i, id := range ids {
		buyer, _ := strconv.ParseInt(id, 10, 64)
		out[i] = ticketOf(buyer, docs[i].Val())
	}
	return out, nil
}

// Relayed records that admin's message msg relays buyer's message, so
// that the admin's reply to it answers the buyer, for ttl.
func (s *Tickets) Relayed(ctx context.Context, admin int64, msg int, buyer int64, ttl time.Duration) error {
	if err := s.rdb.Set(ctx, s.msgKey(admin, msg), itoa(buyer), ttl).Err(); err != nil {
		return fmt.Errorf("record relayed support message: %w", err)
	}
	return nil
}

// ErrNotRelayed means a message is not one relayed from a buyer (or it was
// too long ago).
var ErrNotRelayed = errors.New("not a relayed support message")

// RelayedFrom is the buyer whose message admin's message msg relays
// (ErrNotRelayed when none).
func (s *Tickets) RelayedFrom(ctx context.Context, admin int64, msg int) (int64, error) {
	buyer, err := s.rdb.Get(ctx, s.msgKey(admin, msg)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, ErrNotRelayed
	}
	if err != nil {
		return 0, fmt.Errorf("read relayed support message: %w", err)
	}
	return buyer, nil
}
