package work

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	// BuyerAt is when the buyer last wrote, SeenAt when staff last read the
	// thread in the console: the ticket is unread while BuyerAt is later.
	BuyerAt, SeenAt time.Time
	// AnsweredBy is the staff member who answered last (0: nobody yet).
	AnsweredBy int64
}

// Unread reports whether the buyer wrote since staff last read the thread.
func (t Ticket) Unread() bool { return t.BuyerAt.After(t.SeenAt) }

// TicketMsg is one message of a ticket's thread: the buyer's (From 0) or a
// staff member's answer.
type TicketMsg struct {
	At    time.Time `json:"at"`
	From  int64     `json:"from,omitempty"` // the staff member who answered; 0: the buyer
	Via   string    `json:"via,omitempty"`  // where staff answered from (chat, console)
	Text  string    `json:"text,omitempty"`
	Photo bool      `json:"photo,omitempty"` // a photo was sent
	// PhotoID is the photo's Telegram file id (a photo kept before file
	// ids were: "").
	PhotoID string `json:"photo_id,omitempty"`
}

// PhotoKey names the message's photo without giving its file id out: a
// short hash of it ("" without one).
func (m TicketMsg) PhotoKey() string {
	if m.PhotoID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(m.PhotoID))
	return hex.EncodeToString(sum[:8])
}

// ErrNoTicket: the buyer never wrote to support.
var ErrNoTicket = errors.New("no such support ticket")

// ThreadCap is how many messages a ticket's thread keeps.
const ThreadCap = 200

// Tickets stores support tickets. Keys, under prefix + "support:":
//
//	t:<buyer>          HASH open ("1"/"0"), lang, name, last (unix seconds)
//	open               ZSET open tickets' buyers by last activity (unix seconds)
//	m:<admin>:<msg>    STRING the buyer of a message relayed to an admin,
//	                   so that a reply to it answers them (expires)
//	th:<buyer>         LIST the ticket's thread (TicketMsg JSON), oldest
//	                   first, the last ThreadCap kept
//
// The hash also holds buyer_at and seen (unix seconds: the buyer's last
// message, staff's last read in the console) and by (who answered last).
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
	pipe.HSet(ctx, s.key(buyer), "open", "1", "lang", lang, "name", name, "last", at.Unix(), "buyer_at", at.Unix())
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
	unix := func(k string) time.Time {
		n, _ := strconv.ParseInt(m[k], 10, 64)
		if n == 0 {
			return time.Time{}
		}
		return time.Unix(n, 0)
	}
	by, _ := strconv.ParseInt(m["by"], 10, 64)
	return Ticket{Buyer: buyer, Open: m["open"] == "1", Lang: m["lang"], Name: m["name"], Last: time.Unix(unixOr0(m["last"]), 0),
		BuyerAt: unix("buyer_at"), SeenAt: unix("seen"), AnsweredBy: by}
}

func unixOr0(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// AddMsg appends m to the buyer's thread (keeping the last ThreadCap); a
// staff answer (From set) also records who answered.
func (s *Tickets) AddMsg(ctx context.Context, buyer int64, m TicketMsg) error {
	doc, err := json.Marshal(m)
	if err != nil {
		return err
	}
	pipe := s.rdb.Pipeline()
	pipe.RPush(ctx, s.p+"th:"+itoa(buyer), doc)
	pipe.LTrim(ctx, s.p+"th:"+itoa(buyer), -ThreadCap, -1)
	if m.From != 0 {
		pipe.HSet(ctx, s.key(buyer), "by", m.From)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("support ticket %d: add to the thread: %w", buyer, err)
	}
	return nil
}

// Thread reads the buyer's thread, oldest first.
func (s *Tickets) Thread(ctx context.Context, buyer int64) ([]TicketMsg, error) {
	vals, err := s.rdb.LRange(ctx, s.p+"th:"+itoa(buyer), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("support ticket %d: read the thread: %w", buyer, err)
	}
	out := make([]TicketMsg, 0, len(vals))
	for _, v := range vals {
		var m TicketMsg
		if json.Unmarshal([]byte(v), &m) == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// Seen records that staff read the buyer's thread at at.
func (s *Tickets) Seen(ctx context.Context, buyer int64, at time.Time) error {
	if err := s.rdb.HSet(ctx, s.key(buyer), "seen", at.Unix()).Err(); err != nil {
		return fmt.Errorf("support ticket %d: mark read: %w", buyer, err)
	}
	return nil
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
