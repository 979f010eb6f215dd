package work

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Broadcast statuses.
const (
	// BroadcastScheduled waits for its time (At): Release makes it
	// running, once.
	BroadcastScheduled = "scheduled"
	BroadcastRunning   = "running"
	BroadcastCancelled = "cancelled"
	BroadcastDone      = "done"
)

// BroadcastJob is one admin broadcast: a message to the buyers of an
// audience, sent by whichever process holds the job's lock. When it
// starts running, the audience is listed once (its recipients, in the
// order they started the bot: AddRecipients, then SetListed); Pos is the
// number of recipients already taken. A recipient is taken before the
// message is sent, so a restart never sends twice (a crash in between
// loses at most one message, which is better than repeating it to
// everyone in flight).
type BroadcastJob struct {
	ID        string
	AdminChat int64
	Text      string // Telegram HTML, ready to send (a media's caption)
	Lang      string
	// Media is "" (text), "photo", "video" or "document": a file Telegram
	// has, sent again by FileID.
	Media  string
	FileID string
	// Buttons are the message's buttons as the admin side encodes them
	// (JSON); "" for none.
	Buttons string
	// Audience is who it goes to, as state.Audience writes it; "" for
	// every buyer.
	Audience    string
	Status      string
	At          time.Time // when a scheduled job is due (zero: sent at once)
	Listed      bool      // the recipients are listed; Total is their number
	Pos         int64
	Total       int64 // recipients (once listed)
	Sent        int64
	Blocked     int64
	Failed      int64
	OptedOut    int64 // buyers who turned marketing messages off: skipped
	Opens       int64 // distinct buyers who started the bot through its link
	ProgressMsg int
	CreatedAt   time.Time
}

// Broadcasts stores broadcast jobs, under prefix + "{broadcast}:" (one
// cluster slot: Create and Finish change a job and the active set together;
// jobs are rare). Per job id: the job's HASH (<id>), its recipients
// (<id>:to, a LIST of buyer ids), the buyers who opened its link
// (<id>:opens, a SET), its lock (<id>:lock). The running jobs are in the
// set active2, the scheduled ones in the ZSET scheduled (by due time).
//
// Builds before audiences listed no recipients and carried the jobs of the
// set active, where a job's position was a buyer's in the order they
// started: such a job is carried on here as one to every buyer (listed in
// that order, the positions stay the same), and the jobs of this build are
// never in that set, so an older replica of a rolling upgrade never sends
// a targeted broadcast to everyone.
type Broadcasts struct {
	rdb       redis.UniversalClient
	p         string
	legacy    string // the running jobs of builds before audiences
	active    string
	scheduled string
}

// NewBroadcasts returns the job store under prefix.
func NewBroadcasts(rdb redis.UniversalClient, prefix string) *Broadcasts {
	p := prefix + "{broadcast}:"
	return &Broadcasts{rdb: rdb, p: p, legacy: p + "active", active: p + "active2", scheduled: p + "scheduled"}
}

func (b *Broadcasts) key(id string) string { return b.p + id }

// broadcastTTL is how long a job's records are kept after it was made (or
// due).
const broadcastTTL = 30 * 24 * time.Hour

// Create stores a new job, running or (with At set) scheduled, and
// returns its id.
func (b *Broadcasts) Create(ctx context.Context, j *BroadcastJob) (string, error) {
	n, err := b.rdb.Incr(ctx, b.p+"seq").Result()
	if err != nil {
		return "", fmt.Errorf("create broadcast: %w", err)
	}
	j.ID, j.Status = strconv.FormatInt(n, 10), BroadcastRunning
	if !j.At.IsZero() {
		j.Status = BroadcastScheduled
	}
	ttl := broadcastTTL
	if !j.At.IsZero() {
		ttl += max(time.Until(j.At), 0)
	}
	_, err = b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, b.key(j.ID), "admin", j.AdminChat, "text", j.Text, "lang", j.Lang, "status", j.Status,
			"media", j.Media, "file", j.FileID, "buttons", j.Buttons, "audience", j.Audience, "at", unixOrZero(j.At),
			"pos", 0, "total", j.Total, "sent", 0, "blocked", 0, "failed", 0, "progress", j.ProgressMsg, "created", j.CreatedAt.Unix())
		p.Expire(ctx, b.key(j.ID), ttl)
		if j.Status == BroadcastScheduled {
			p.ZAdd(ctx, b.scheduled, redis.Z{Score: float64(j.At.Unix()), Member: j.ID})
		} else {
			p.SAdd(ctx, b.active, j.ID)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("create broadcast: %w", err)
	}
	return j.ID, nil
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// Get reads a job.
func (b *Broadcasts) Get(ctx context.Context, id string) (*BroadcastJob, error) {
	var all *redis.MapStringStringCmd
	var opens *redis.IntCmd
	_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		all = p.HGetAll(ctx, b.key(id))
		opens = p.SCard(ctx, b.key(id)+":opens")
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read broadcast %s: %w", id, err)
	}
	m := all.Val()
	if len(m) == 0 {
		return nil, fmt.Errorf("broadcast %s: %w", id, ErrBroadcastNotFound)
	}
	num := func(k string) int64 { n, _ := strconv.ParseInt(m[k], 10, 64); return n }
	j := &BroadcastJob{
		ID: id, AdminChat: num("admin"), Text: m["text"], Lang: m["lang"], Status: m["status"],
		Media: m["media"], FileID: m["file"], Buttons: m["buttons"], Audience: m["audience"], Listed: m["listed"] == "1",
		Pos: num("pos"), Total: num("total"), Sent: num("sent"), Blocked: num("blocked"), Failed: num("failed"), OptedOut: num("optout"),
		Opens: opens.Val(), ProgressMsg: int(num("progress")), CreatedAt: time.Unix(num("created"), 0),
	}
	if at := num("at"); at > 0 {
		j.At = time.Unix(at, 0)
	}
	return j, nil
}

// ErrBroadcastNotFound is a job id the store does not have (never made,
// or expired).
var ErrBroadcastNotFound = errors.New("not found")

// Active lists running jobs (this build's and earlier builds').
func (b *Broadcasts) Active(ctx context.Context) ([]string, error) {
	var cur, old *redis.StringSliceCmd
	_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cur = p.SMembers(ctx, b.active)
		old = p.SMembers(ctx, b.legacy)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ids := append(cur.Val(), old.Val()...)
	slices.SortFunc(ids, func(a, b string) int { return cmpID(a, b) })
	return slices.Compact(ids), nil
}

// Scheduled lists the scheduled jobs, soonest first.
func (b *Broadcasts) Scheduled(ctx context.Context) ([]string, error) {
	return b.rdb.ZRange(ctx, b.scheduled, 0, -1).Result()
}

// Recent lists the ids of the last n jobs made, newest first (some may
// have expired).
func (b *Broadcasts) Recent(ctx context.Context, n int) ([]string, error) {
	last, err := b.rdb.Get(ctx, b.p+"seq").Int64()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for id := last; id > 0 && len(ids) < n; id-- {
		ids = append(ids, strconv.FormatInt(id, 10))
	}
	return ids, nil
}

// cmpID orders job ids by number.
func cmpID(a, b string) int {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	return cmp.Compare(x, y)
}

var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'status') ~= 'scheduled' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running')
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1`)

// Release makes a scheduled job running, once: false when it was not
// scheduled any more (released before, or cancelled).
func (b *Broadcasts) Release(ctx context.Context, id string) (bool, error) {
	n, err := releaseScript.Run(ctx, b.rdb, []string{b.key(id), b.scheduled, b.active}, id).Int()
	return n == 1, err
}

// ResetRecipients forgets a job's recipients listed so far (a listing
// another process began and did not finish).
func (b *Broadcasts) ResetRecipients(ctx context.Context, id string) error {
	return b.rdb.Del(ctx, b.key(id)+":to").Err()
}

// AddRecipients lists more recipients of a job, after those listed.
func (b *Broadcasts) AddRecipients(ctx context.Context, id string, buyers []int64) error {
	if len(buyers) == 0 {
		return nil
	}
	vals := make([]any, len(buyers))
	for i, v := range buyers {
		vals[i] = v
	}
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, b.key(id)+":to", vals...)
		p.Expire(ctx, b.key(id)+":to", broadcastTTL)
		return nil
	})
	return err
}

// SetListed records that a job's recipients are listed: total of them.
func (b *Broadcasts) SetListed(ctx context.Context, id string, total int64) error {
	return b.rdb.HSet(ctx, b.key(id), "listed", 1, "total", total).Err()
}

var openScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1`)

// Opened counts user as one who opened job id's link (each user once);
// false when there is no such job.
func (b *Broadcasts) Opened(ctx context.Context, id string, user int64) (bool, error) {
	n, err := openScript.Run(ctx, b.rdb, []string{b.key(id), b.key(id) + ":opens"}, user, int(broadcastTTL.Seconds())).Int()
	return n == 1, err
}

var bcLockScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)

var bcUnbcLockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`)

// Lock takes (or renews) the job's lock for owner; false when another
// process holds it.
func (b *Broadcasts) Lock(ctx context.Context, id, owner string, ttl time.Duration) (bool, error) {
	n, err := bcLockScript.Run(ctx, b.rdb, []string{b.key(id) + ":lock"}, owner, ttl.Milliseconds()).Int()
	return n == 1, err
}

// Unlock releases the job's lock if owner holds it (the cache's token-checked unlock).
func (b *Broadcasts) Unlock(ctx context.Context, id, owner string) error {
	return bcUnbcLockScript.Run(ctx, b.rdb, []string{b.key(id) + ":lock"}, owner).Err()
}

// ErrBroadcastStopped means the job is no longer running (done or cancelled).
var ErrBroadcastStopped = errors.New("broadcast is not running")

var takeRecipientScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return {-1, 0} end
local pos = redis.call('HINCRBY', KEYS[1], 'pos', 1) - 1
local buyer = redis.call('LINDEX', KEYS[2], pos)
if not buyer then return {pos, 0} end
return {pos, tonumber(buyer)}`)

// TakeRecipient reserves the next position of a running job and returns
// the recipient listed there; ok is false past the last one.
func (b *Broadcasts) TakeRecipient(ctx context.Context, id string) (buyer int64, ok bool, err error) {
	res, err := takeRecipientScript.Run(ctx, b.rdb, []string{b.key(id), b.key(id) + ":to"}).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("take broadcast recipient: %w", err)
	}
	if res[0] < 0 {
		return 0, false, ErrBroadcastStopped
	}
	return res[1], res[1] != 0, nil
}

// Record counts one outcome: "sent", "blocked", "failed" or "optout".
func (b *Broadcasts) Record(ctx context.Context, id, outcome string) error {
	return b.rdb.HIncrBy(ctx, b.key(id), outcome, 1).Err()
}

// SetProgressMsg stores the admin's progress message id.
func (b *Broadcasts) SetProgressMsg(ctx context.Context, id string, msg int) error {
	return b.rdb.HSet(ctx, b.key(id), "progress", msg).Err()
}

var finishScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= 'running' and st ~= 'scheduled' then return 0 end
if st == 'scheduled' and ARGV[1] ~= 'cancelled' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1])
redis.call('SREM', KEYS[2], ARGV[2])
redis.call('SREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
return 1`)

// Finish moves a running job to done or cancelled, or a scheduled one to
// cancelled; false when it was not running (or scheduled) any more.
func (b *Broadcasts) Finish(ctx context.Context, id, status string) (bool, error) {
	n, err := finishScript.Run(ctx, b.rdb, []string{b.key(id), b.active, b.legacy, b.scheduled}, status, id).Int()
	return n == 1, err
}

// MarkReported records that a finished job's final report was sent; false
// when it already was (by this process or another).
func (b *Broadcasts) MarkReported(ctx context.Context, id string) (bool, error) {
	return b.rdb.HSetNX(ctx, b.key(id), "reported", "1").Result()
}

// Close forgets a finished job from the active sets.
func (b *Broadcasts) Close(ctx context.Context, id string) error {
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SRem(ctx, b.active, id)
		p.SRem(ctx, b.legacy, id)
		return nil
	})
	return err
}
