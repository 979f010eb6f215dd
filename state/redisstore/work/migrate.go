package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/sched"

	"github.com/redis/go-redis/v9"
)

// MigrateReport counts what MigrateLayout moved.
type MigrateReport struct {
	Keys  int // keys renamed or merged into the sharded layout
	Chats int // chats moved out of the legacy ready set
	Jobs  int // schedule entries moved into their shards
}

// migrateLock keeps replicas starting together from migrating at once;
// migrateDone says the migration ran, so later starts skip its scans of
// the whole keyspace.
const (
	migrateLock = "migrate:layout:lock"
	migrateDone = "migrate:layout:done"
)

// MigrateLayout moves the keys of the single-slot layout (before Redis
// Cluster support) to the sharded one, so an upgrade keeps what was
// stored: the buyer registry ("users:*" -> "{users}:*"), broadcasts
// ("broadcast:*" -> "{broadcast}:*"), the job schedules ("{sched}:" and
// "{sched:<name>}:" -> their shards) and the update intake ("{chats}:"
// -> the chat shards: queued updates, conversations, attempt counters;
// leases are dropped, so every chat with work is ready at once). Seen
// update ids stay behind and expire: they do not name their chat, so
// their shard is unknown. Telegram redelivers only what was not
// acknowledged, so only an update stored just as the old version stopped,
// before its acknowledgement, can be stored twice; a repeated payment is
// still one order (the charge index), a repeated tap one invoice. Orders, wallets, quotes and the rest kept their names.
//
// It runs at start, before the shop serves, and is idempotent: a second
// run finds nothing to move (and once it has run, it only reads a marker). Stop every replica of the old version first:
// an old replica writing the legacy keys meanwhile is not migrated. That
// layout only ever worked on one server, so MigrateLayout does nothing on
// a cluster.
func MigrateLayout(ctx context.Context, rdb redis.UniversalClient, prefix string) (MigrateReport, error) {
	var rep MigrateReport
	if _, ok := rdb.(*redis.ClusterClient); ok {
		return rep, nil
	}
	if prefix == "" {
		prefix = redisstore.DefaultPrefix
	}
	// Replicas starting together: one migrates, the others wait for it.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if n, err := rdb.Exists(ctx, prefix+migrateDone).Result(); err != nil {
			return rep, fmt.Errorf("migrate layout: %w", err)
		} else if n == 1 {
			return rep, nil
		}
		ok, err := rdb.SetNX(ctx, prefix+migrateLock, "1", time.Minute).Result()
		if err != nil {
			return rep, fmt.Errorf("migrate layout: %w", err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return rep, errors.New("migrate layout: another replica has been migrating for 2 minutes")
		}
		select {
		case <-ctx.Done():
			return rep, fmt.Errorf("migrate layout: waiting for another replica's migration: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond): // poll the other replica's progress
		}
	}
	defer rdb.Del(context.WithoutCancel(ctx), prefix+migrateLock)

	// Plain renames: users and broadcasts.
	for _, pair := range [][2]string{{"users:", "{users}:"}, {"broadcast:", "{broadcast}:"}} {
		keys, err := scanKeys(ctx, rdb, prefix+pair[0]+"*")
		if err != nil {
			return rep, fmt.Errorf("migrate layout: %w", err)
		}
		for _, k := range keys {
			to := prefix + pair[1] + strings.TrimPrefix(k, prefix+pair[0])
			if err := moveKey(ctx, rdb, k, to); err != nil {
				return rep, err
			}
			rep.Keys++
		}
	}
	if err := migrateSchedules(ctx, rdb, prefix, &rep); err != nil {
		return rep, err
	}
	if err := migrateIntake(ctx, rdb, prefix, &rep); err != nil {
		return rep, err
	}
	if err := rdb.Set(ctx, prefix+migrateDone, time.Now().UTC().Format(time.RFC3339), 0).Err(); err != nil {
		return rep, fmt.Errorf("migrate layout: %w", err)
	}
	return rep, nil
}

// moveKey renames from to to; when to exists already, the newer to wins
// for strings and hashes, and a list is prepended to it (from is older).
func moveKey(ctx context.Context, rdb redis.UniversalClient, from, to string) error {
	ok, err := rdb.RenameNX(ctx, from, to).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return nil // another run moved it
		}
		return fmt.Errorf("migrate %s: %w", from, err)
	}
	if ok {
		return nil
	}
	if err := migrateMergeScript.Run(ctx, rdb, []string{from, to}).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("migrate %s: %w", from, err)
	}
	return nil
}

// migrateMergeScript: KEYS from, to (both exist). Lists: from's items go
// before to's; sets and sorted sets: union (to's scores win); anything
// else: to wins. from is deleted.
var migrateMergeScript = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'list' then
  local items = redis.call('LRANGE', KEYS[1], 0, -1)
  for i = #items, 1, -1 do redis.call('LPUSH', KEYS[2], items[i]) end
elseif t == 'set' then
  local items = redis.call('SMEMBERS', KEYS[1])
  for i = 1, #items do redis.call('SADD', KEYS[2], items[i]) end
elseif t == 'zset' then
  local items = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #items, 2 do redis.call('ZADD', KEYS[2], 'NX', items[i + 1], items[i]) end
end
redis.call('DEL', KEYS[1])
return 1`)

// migrateSchedules moves "{sched}:due/tok" and "{sched:<name>}:due/tok"
// entries into their shards. Tokens are dropped: a lease of the old
// version's worker means nothing now, and the job is due at its score.
func migrateSchedules(ctx context.Context, rdb redis.UniversalClient, prefix string, rep *MigrateReport) error {
	dues, err := scanKeys(ctx, rdb, prefix+"{sched*}:due")
	if err != nil {
		return fmt.Errorf("migrate schedules: %w", err)
	}
	for _, due := range dues {
		tag := strings.TrimSuffix(strings.TrimPrefix(due, prefix+"{"), "}:due")
		var s *sched.Schedule
		switch name, named := strings.CutPrefix(tag, "sched:"); {
		case tag == "sched":
			s = sched.NewSchedule(rdb, prefix)
		case named && !strings.Contains(name, ":") && !isDigits(name):
			s = sched.NewNamedSchedule(rdb, prefix, name)
		default:
			continue // a shard of the new layout
		}
		jobs, err := rdb.ZRangeWithScores(ctx, due, 0, -1).Result()
		if err != nil {
			return fmt.Errorf("migrate %s: %w", due, err)
		}
		for _, z := range jobs {
			job, _ := z.Member.(string)
			if err := rdb.ZAddNX(ctx, s.DueKey(job), redis.Z{Score: z.Score, Member: job}).Err(); err != nil {
				return fmt.Errorf("migrate job %s: %w", job, err)
			}
			rep.Jobs++
		}
		if err := rdb.Del(ctx, due, strings.TrimSuffix(due, "due")+"tok").Err(); err != nil {
			return fmt.Errorf("migrate %s: %w", due, err)
		}
	}
	return nil
}

// migrateIntake moves "{chats}:" keys into the chat shards.
func migrateIntake(ctx context.Context, rdb redis.UniversalClient, prefix string, rep *MigrateReport) error {
	old := prefix + "{chats}:"
	q := intake.NewQueue(rdb, prefix)
	keys, err := scanKeys(ctx, rdb, old+"*")
	if err != nil {
		return fmt.Errorf("migrate intake: %w", err)
	}
	for _, k := range keys {
		rest := strings.TrimPrefix(k, old)
		kind, id, _ := strings.Cut(rest, ":")
		n, err := strconv.ParseInt(id, 10, 64)
		switch {
		case kind == "ready" || kind == "lease":
			continue // below
		case err != nil:
			continue // not a key of the old layout
		case kind == "q" || kind == "att" || kind == "conv":
			err = moveKey(ctx, rdb, k, q.ShardTag(n)+kind+":"+id)
		default:
			continue
		}
		if err != nil {
			return err
		}
		rep.Keys++
	}
	ready, err := rdb.ZRangeWithScores(ctx, old+"ready", 0, -1).Result()
	if err != nil {
		return fmt.Errorf("migrate intake: %w", err)
	}
	now := float64(time.Now().UnixMilli())
	for _, z := range ready {
		chat, _ := z.Member.(string)
		n, err := strconv.ParseInt(chat, 10, 64)
		if err != nil {
			continue
		}
		// Due now: a lease of the old version's worker means nothing.
		if err := rdb.ZAddNX(ctx, q.ShardTag(n)+"ready", redis.Z{Score: min(z.Score, now), Member: chat}).Err(); err != nil {
			return fmt.Errorf("migrate chat %s: %w", chat, err)
		}
		rep.Chats++
	}
	if err := rdb.Del(ctx, old+"ready", old+"lease").Err(); err != nil {
		return fmt.Errorf("migrate intake: %w", err)
	}
	return nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// scanKeys lists the keys matching pattern on a single server.
func scanKeys(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	var out []string
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	return out, iter.Err()
}
