package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replica is one running process of the shop as it registers itself: its
// build (Version) and the schema generation it speaks (Gen, state.SchemaGen)
// with the oldest generation it runs beside (MinPeer, state.MinPeerGen).
type Replica struct {
	ID      string    `json:"id"`
	Version string    `json:"version"`
	Gen     int       `json:"gen"`
	MinPeer int       `json:"min_peer"`
	Host    string    `json:"host,omitempty"`
	Started time.Time `json:"started"`
	// Seen is when the replica last renewed its entry (not stored in the
	// JSON: the entry's prefix holds it).
	Seen time.Time `json:"-"`
}

// String names the replica in messages: its version and generation, where
// it runs and since when.
func (r Replica) String() string {
	s := fmt.Sprintf("version %s (schema generation %d, runs beside generation %d and later)", r.Version, r.Gen, r.MinPeer)
	if r.Host != "" {
		s += " on " + r.Host
	}
	return s
}

// Compatible reports whether replicas a and b may run side by side: each
// speaks a schema generation the other runs beside. A newer build knows
// what it changed, so its MinPeer decides whether an older one may run
// beside it; the rule is symmetric, so an older build started again beside
// a newer one that excludes it is refused too (docs/design.md, "Version
// skew").
func Compatible(a, b Replica) bool { return a.Gen >= b.MinPeer && b.Gen >= a.MinPeer }

// Timing of the registry: a replica renews its entry every ReplicaBeat; an
// entry not renewed for ReplicaTTL is a replica that is gone (killed
// without leaving).
const (
	ReplicaBeat = 5 * time.Second
	ReplicaTTL  = 20 * time.Second
)

// Replicas is the registry of the running replicas, one HASH under
// prefix + "replicas" (field: the replica's id; value "<seen ms> <gen>
// <min peer> <JSON of the Replica>"), so that a starting replica checks
// itself against every live one and registers in one step.
type Replicas struct {
	rdb redis.UniversalClient
	key string
}

// NewReplicas returns the registry under prefix.
func NewReplicas(rdb redis.UniversalClient, prefix string) *Replicas {
	return &Replicas{rdb: rdb, key: prefix + "replicas"}
}

// IncompatibleError is Join's refusal: replicas that cannot run beside Me
// are live.
type IncompatibleError struct {
	Me   Replica
	Them []Replica
}

// Error names the versions on both sides and what to do.
func (e *IncompatibleError) Error() string {
	var them []string
	for _, r := range e.Them {
		them = append(them, r.String())
	}
	return fmt.Sprintf("this build, %s, cannot run beside the replicas running now: %s. "+
		"Stop those first (this upgrade cannot be rolling), or deploy a build that runs beside them; see docs/operator.md, \"Upgrades\"",
		e.Me, strings.Join(them, "; "))
}

// replicaValue encodes r as seen at seen.
func replicaValue(r Replica, seen time.Time) (string, error) {
	doc, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d %d %d %s", seen.UnixMilli(), r.Gen, r.MinPeer, doc), nil
}

// parseReplica decodes an entry.
func parseReplica(v string) (Replica, bool) {
	parts := strings.SplitN(v, " ", 4)
	if len(parts) != 4 {
		return Replica{}, false
	}
	ms, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return Replica{}, false
	}
	var r Replica
	if json.Unmarshal([]byte(parts[3]), &r) != nil {
		return Replica{}, false
	}
	r.Seen = time.UnixMilli(ms)
	return r, true
}

// replicaJoinScript: KEYS[1] the registry. ARGV id, value, now ms, TTL ms,
// gen, min peer. Drops the entries not renewed within the TTL, then: when
// a live replica (other than id) cannot run beside this one, returns {0,
// their entries} and registers nothing; otherwise registers id and returns
// {1, the other live entries}.
var replicaJoinScript = redis.NewScript(`
local now, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local gen, minpeer = tonumber(ARGV[5]), tonumber(ARGV[6])
local all = redis.call('HGETALL', KEYS[1])
local live, bad = {}, {}
for i = 1, #all, 2 do
  local seen, g, m = string.match(all[i + 1], '^(%d+) (%d+) (%d+) ')
  if not seen or tonumber(seen) + ttl < now then
    redis.call('HDEL', KEYS[1], all[i])
  elseif all[i] ~= ARGV[1] then
    table.insert(live, all[i + 1])
    if tonumber(g) < minpeer or gen < tonumber(m) then table.insert(bad, all[i + 1]) end
  end
end
if #bad > 0 then return {0, bad} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return {1, live}`)

// Join registers me unless a live replica cannot run beside it
// (Compatible), in one step, so that of two incompatible replicas starting
// at once one is refused. It returns the other live replicas, or an
// *IncompatibleError naming the ones that exclude it (nothing registered).
func (r *Replicas) Join(ctx context.Context, me Replica, now time.Time) ([]Replica, error) {
	val, err := replicaValue(me, now)
	if err != nil {
		return nil, err
	}
	res, err := replicaJoinScript.Run(ctx, r.rdb, []string{r.key}, me.ID, val, now.UnixMilli(), ReplicaTTL.Milliseconds(), me.Gen, me.MinPeer).Slice()
	if err != nil {
		return nil, fmt.Errorf("register replica: %w", err)
	}
	if len(res) != 2 {
		return nil, errors.New("register replica: unexpected answer")
	}
	entries, _ := res[1].([]any)
	var out []Replica
	for _, e := range entries {
		v, _ := e.(string)
		if rep, ok := parseReplica(v); ok {
			out = append(out, rep)
		}
	}
	sortReplicas(out)
	if ok, _ := res[0].(int64); ok == 0 {
		return nil, &IncompatibleError{Me: me, Them: out}
	}
	return out, nil
}

// Beat renews me's entry (registering it again when the registry lost it:
// a Redis restored from a backup, or a pause longer than the TTL).
func (r *Replicas) Beat(ctx context.Context, me Replica, now time.Time) error {
	val, err := replicaValue(me, now)
	if err != nil {
		return err
	}
	_, err = r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, r.key, me.ID, val)
		p.PExpire(ctx, r.key, 2*ReplicaTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("renew replica %s: %w", me.ID, err)
	}
	return nil
}

// Leave removes replica id (a replica that stops cleanly).
func (r *Replicas) Leave(ctx context.Context, id string) error {
	if err := r.rdb.HDel(ctx, r.key, id).Err(); err != nil {
		return fmt.Errorf("unregister replica %s: %w", id, err)
	}
	return nil
}

// Live returns the replicas whose entries were renewed within the TTL at
// now, oldest first.
func (r *Replicas) Live(ctx context.Context, now time.Time) ([]Replica, error) {
	all, err := r.rdb.HGetAll(ctx, r.key).Result()
	if err != nil {
		return nil, fmt.Errorf("read replicas: %w", err)
	}
	var out []Replica
	for _, v := range all {
		if rep, ok := parseReplica(v); ok && !rep.Seen.Add(ReplicaTTL).Before(now) {
			out = append(out, rep)
		}
	}
	sortReplicas(out)
	return out, nil
}

func sortReplicas(list []Replica) {
	slices.SortFunc(list, func(a, b Replica) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
