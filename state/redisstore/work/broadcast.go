package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Broadcast statuses.
const (
	BroadcastRunning   = "running"
	BroadcastCancelled = "cancelled"
	BroadcastDone      = "done"
)

// BroadcastJob is one admin broadcast: a message to every buyer who started
// the bot, sent by whichever process holds the job's lock. Pos is the
// number of buyers already taken; a buyer is taken before the message is
// sent, so a restart never sends twice (a crash in between loses at most
// one message, which is better than repeating it to everyone in flight).
type BroadcastJob struct {
	ID          string
	AdminChat   int64
	Text        string // Telegram HTML, ready to send
	Lang        string
	Status      string
	Pos         int64
	Total       int64 // buyers when the job started
	Sent        int64
	Blocked     int64
	Failed      int64
	ProgressMsg int
	CreatedAt   time.Time
}

// Broadcasts stores broadcast jobs, under prefix + "{broadcast}:" (one
// cluster slot: Create and Finish change a job and the active set together;
// jobs are rare).
type Broadcasts struct {
	rdb    redis.UniversalClient
	p      string
	active string
}

// NewBroadcasts returns the job store under prefix.
func NewBroadcasts(rdb redis.UniversalClient, prefix string) *Broadcasts {
	return &Broadcasts{rdb: rdb, p: prefix + "{broadcast}:", active: prefix + "{broadcast}:active"}
}

func (b *Broadcasts) key(id string) string { return b.p + id }

// Create stores a new running job and returns its id.
func (b *Broadcasts) Create(ctx context.Context, j *BroadcastJob) (string, error) {
	n, err := b.rdb.Incr(ctx, b.p+"seq").Result()
	if err != nil {
		return "", fmt.Errorf("create broadcast: %w", err)
	}
	j.ID, j.Status = strconv.FormatInt(n, 10), BroadcastRunning
	_, err = b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, b.key(j.ID), "admin", j.AdminChat, "text", j.Text, "lang", j.Lang, "status", j.Status,
			"pos", 0, "total", j.Total, "sent", 0, "blocked", 0, "failed", 0, "progress", j.ProgressMsg, "created", j.CreatedAt.Unix())
		p.Expire(ctx, b.key(j.ID), 30*24*time.Hour)
		p.SAdd(ctx, b.active, j.ID)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("create broadcast: %w", err)
	}
	return j.ID, nil
}

// Get reads a job.
func (b *Broadcasts) Get(ctx context.Context, id string) (*BroadcastJob, error) {
	m, err := b.rdb.HGetAll(ctx, b.key(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("read broadcast %s: %w", id, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("broadcast %s: not found", id)
	}
	num := func(k string) int64 { n, _ := strconv.ParseInt(m[k], 10, 64); return n }
	return &BroadcastJob{
		ID: id, AdminChat: num("admin"), Text: m["text"], Lang: m["lang"], Status: m["status"],
		Pos: num("pos"), Total: num("total"), Sent: num("sent"), Blocked: num("blocked"), Failed: num("failed"),
		ProgressMsg: int(num("progress")), CreatedAt: time.Unix(num("created"), 0),
	}, nil
}

// Active lists running jobs.
func (b *Broadcasts) Active(ctx context.Context) ([]string, error) {
	return b.rdb.SMembers(ctx, b.active).Result()
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

var takeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return -1 end
return redis.call('HINCRBY', KEYS[1], 'pos', 1) - 1`)

// ErrBroadcastStopped means the job is no longer running (done or cancelled).
var ErrBroadcastStopped = errors.New("broadcast is not running")

// Take reserves the next buyer position of a running job.
func (b *Broadcasts) Take(ctx context.Context, id string) (int64, error) {
	n, err := takeScript.Run(ctx, b.rdb, []string{b.key(id)}).Int64()
	if err != nil {
		return 0, fmt.Errorf("take broadcast position: %w", err)
	}
	if n < 0 {
		return 0, ErrBroadcastStopped
	}
	return n, nil
}

// Record counts one outcome: "sent", "blocked" or "failed".
func (b *Broadcasts) Record(ctx context.Context, id, outcome string) error {
	return b.rdb.HIncrBy(ctx, b.key(id), outcome, 1).Err()
}

// SetProgressMsg stores the admin's progress message id.
func (b *Broadcasts) SetProgressMsg(ctx context.Context, id string, msg int) error {
	return b.rdb.HSet(ctx, b.key(id), "progress", msg).Err()
}

var finishScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1])
redis.call('SREM', KEYS[2], ARGV[2])
return 1`)

// Finish moves a running job to done or cancelled; false when it was not
// running any more.
func (b *Broadcasts) Finish(ctx context.Context, id, status string) (bool, error) {
	n, err := finishScript.Run(ctx, b.rdb, []string{b.key(id), b.active}, status, id).Int()
	return n == 1, err
}

// MarkReported records that a finished job's final report was sent; false
// when it already was (by this process or another).
func (b *Broadcasts) MarkReported(ctx context.Context, id string) (bool, error) {
	return b.rdb.HSetNX(ctx, b.key(id), "reported", "1").Result()
}

// Close forgets a finished job from the active set.
func (b *Broadcasts) Close(ctx context.Context, id string) error {
	return b.rdb.SRem(ctx, b.active, id).Err()
}
