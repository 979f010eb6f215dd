package sched

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/state/redisstore"
)

// ErrJobLeaseLost means the job's lease expired and another worker claimed
// it, or it was Put or Removed meanwhile; the call changed nothing.
var ErrJobLeaseLost = errors.New("schedule job lease lost")

// Job is a claimed schedule entry. Name is the caller's ("track:42",
// "refund:42", "place:42"); Token proves the claim; Due is when it was due
// (for a job whose earlier lease expired, when that lease ran out). Gen is
// the lease's generation, the fencing token of what the holder does
// outside Redis: each claim of the job gets a higher one than the claims
// before it, for as long as the job is scheduled (Done and Remove start it
// over).
type Job struct {
	Name  string
	Token string
	Due   time.Time
	Gen   int64
}

// Shards is how many shards a job schedule has.
const Shards = 8

// Schedule is the durable job schedule behind tracking, placing and refund
// retries: a ZSET of job names scored by due time (ms) and a HASH of lease
// tokens, sharded by job name over Shards cluster slots (keys
// prefix + "{sched:<n>}:due" and ":tok"; a job's two records share its
// shard's slot). Any replica may Claim due jobs; a claim
// moves the job's score to the end of its lease, so a job whose worker died
// comes back once the lease runs out. There is one entry per job name: Put
// upserts, and the last write wins. Entries leave with Done or Remove, so the
// schedule holds only live work.
type Schedule struct {
	rdb redis.UniversalClient
	p   string // prefix + "{sched" or prefix + "{sched:<name>"
}

// NewSchedule returns the schedule under prefix: the order jobs of the
// fulfilment worker.
func NewSchedule(rdb redis.UniversalClient, prefix string) *Schedule {
	return &Schedule{rdb: rdb, p: prefix + "{sched"}
}

// NewNamedSchedule returns a separate schedule called name under prefix
// (keys prefix + "{sched:<name>:<n>}:"), for another kind of job with its own
// worker. A Claim on one schedule never takes the jobs of another, so a
// worker only ever leases jobs it knows how to run, and jobs of one kind
// cannot crowd the others out of a Claim's limit.
func NewNamedSchedule(rdb redis.UniversalClient, prefix, name string) *Schedule {
	return &Schedule{rdb: rdb, p: prefix + "{sched:" + name}
}

// keys are the due ZSET and token HASH of shard n.
func (s *Schedule) keys(n int) []string {
	t := s.p + ":" + strconv.Itoa(n) + "}:"
	return []string{t + "due", t + "tok"}
}

// jobKeys are the keys of job's shard.
func (s *Schedule) jobKeys(job string) []string { return s.keys(redisstore.Shard(job, Shards)) }

// DueKey is the due ZSET of job's shard, where the key layout's migration
// (work.MigrateLayout) moves the job's legacy entry.
func (s *Schedule) DueKey(job string) string { return s.jobKeys(job)[0] }

func schedMS(t time.Time) int64 { return t.UnixMilli() }

// hurryField suffixes a job's name in the token HASH: the time a Hurry
// came while the job was running. genField suffixes it for the job's
// lease generation (Job.Gen); needField suffixes it for the oldest schema generation that may claim
// the job (LeaveFor).
const (
	hurryField = "\x00hurry"
	genField   = "\x00gen"
	needField  = "\x00need"
)

var schedPutScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1], ARGV[1] .. '\0hurry', ARGV[1] .. '\0need')
return 1`)

// Put schedules job at at, replacing any earlier entry for it: the last
// write wins, even over an earlier due time. A lease held on the job is
// cancelled, so its holder's Done or Reschedule fails with ErrJobLeaseLost
// and the new time stands; so is a generation it was left for (LeaveFor).
func (s *Schedule) Put(ctx context.Context, job string, at time.Time) error {
	if job == "" {
		return errors.New("schedule: empty job name")
	}
	if err := schedPutScript.Run(ctx, s.rdb, s.jobKeys(job), job, schedMS(at)).Err(); err != nil {
		return fmt.Errorf("schedule %s: %w", job, err)
	}
	return nil
}

// Kind is the kind of job name: what comes before its first colon ("order"
// of "order:42", "books" of "books:reconcile"), the whole name when it has
// none.
func Kind(job string) string {
	kind, _, _ := strings.Cut(job, ":")
	return kind
}

// Known is what a claimer can run (ClaimKnown): the job kinds it knows and
// the schema generation it speaks. During an upgrade, replicas of two
// builds claim from one schedule; a job of a kind the claimer's build does
// not know, or one a replica left for a newer generation (LeaveFor), is not
// claimed: it stays due for a replica that runs it.
type Known struct {
	Kinds []string // the kinds it runs (Kind); nil: every kind
	Gen   int      // its schema generation; 0: jobs left for any generation are skipped too
}

// schedClaimScript: KEYS due, tok of one shard. ARGV now ms, lease end ms,
// limit, token, generation ("*": any, jobs left for one included), then the
// known kinds (none: every kind). It leases up to limit due jobs, oldest
// first, skipping those of other kinds and those left for a newer
// generation (they stay due), looking at 1,024 due jobs at most. Returns
// name, due score and lease generation of each.
var schedClaimScript = redis.NewScript(`
local known = nil
if #ARGV > 5 then
  known = {}
  for i = 6, #ARGV do known[ARGV[i]] = true end
end
local anygen = ARGV[5] == '*'
local gen = tonumber(ARGV[5])
local want = tonumber(ARGV[3])
local out = {}
local got, skipped, seen = 0, 0, 0
while got < want and seen < 1024 do
  local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', skipped, want - got + 16)
  if #r == 0 then break end
  for i = 1, #r, 2 do
    local name = r[i]
    local ok = got < want
    if ok and known then ok = known[string.match(name, '^[^:]*')] ~= nil end
    if ok and not anygen then
      local need = tonumber(redis.call('HGET', KEYS[2], name .. '\0need') or '')
      if need and need > gen then ok = false end
    end
    if ok then
      redis.call('ZADD', KEYS[1], ARGV[2], name)
      redis.call('HSET', KEYS[2], name, ARGV[4])
      redis.call('HDEL', KEYS[2], name .. '\0hurry')
      local g = redis.call('HINCRBY', KEYS[2], name .. '\0gen', 1)
      table.insert(out, name)
      table.insert(out, r[i + 1])
      table.insert(out, tostring(g))
      got = got + 1
    else
      skipped = skipped + 1
    end
    seen = seen + 1
  end
end
return out`)

// Claim takes up to limit jobs due at now, oldest first, and leases them until
// now+lease: no other Claim gets them before then. Finish each with Done,
// Reschedule or Extend before the lease runs out. It reads the due jobs of
// every shard in one pipeline, then claims in each shard as many as the
// oldest limit of them hold there. It takes jobs of every kind; a replica's
// runner claims with ClaimKnown.
func (s *Schedule) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Job, error) {
	return s.claim(ctx, now, lease, limit, nil)
}

// ClaimKnown is Claim for a claimer that runs only what k says: a job of
// another kind, or one left for a newer generation than k.Gen, is left due
// for another claimer.
func (s *Schedule) ClaimKnown(ctx context.Context, now time.Time, lease time.Duration, limit int, k Known) ([]Job, error) {
	return s.claim(ctx, now, lease, limit, &k)
}

func (s *Schedule) claim(ctx context.Context, now time.Time, lease time.Duration, limit int, k *Known) ([]Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	if lease <= 0 {
		return nil, errors.New("claim jobs: lease must be positive")
	}
	var known map[string]bool
	args := []any{"*"} // the generation ("*": any), then the known kinds
	if k != nil {
		args[0] = strconv.Itoa(k.Gen)
		if k.Kinds != nil {
			if len(k.Kinds) == 0 {
				return nil, nil // it runs no kind at all
			}
			known = map[string]bool{}
			for _, kind := range k.Kinds {
				known[kind] = true
				args = append(args, kind)
			}
		}
	}
	// The peek reads a few more than limit, so jobs of other kinds ahead
	// of ours do not hide ours.
	peek := limit
	if known != nil {
		peek += 16
	}
	max := strconv.FormatInt(schedMS(now), 10)
	peeks := make([]*redis.ZSliceCmd, Shards)
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n := range Shards {
			peeks[n] = p.ZRangeByScoreWithScores(ctx, s.keys(n)[0], &redis.ZRangeBy{Min: "-inf", Max: max, Count: int64(peek)})
		}
		return nil
	})
	type due struct {
		shard int
		at    float64
	}
	var all []due
	var firstErr error
	failed := 0
	crowded := make([]bool, Shards) // the peek was full of jobs of other kinds
	for n, c := range peeks {
		zs, err := c.Result()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			failed++
			continue
		}
		for _, z := range zs {
			if name, _ := z.Member.(string); known != nil && !known[Kind(name)] {
				crowded[n] = len(zs) == peek
				continue
			}
			all = append(all, due{n, z.Score})
		}
	}
	if failed == Shards {
		return nil, fmt.Errorf("claim jobs: %w", firstErr)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	per := make([]int, Shards)
	for _, d := range all[:min(limit, len(all))] {
		per[d.shard]++
	}
	token := redisstore.NewToken()
	var jobs []Job
	run := func(n, want int) error {
		res, err := schedClaimScript.Run(ctx, s.rdb, s.keys(n),
			append([]any{schedMS(now), schedMS(now.Add(lease)), want, token}, args...)...).StringSlice()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		for i := 0; i+2 < len(res); i += 3 {
			f, _ := strconv.ParseFloat(res[i+1], 64)
			gen, _ := strconv.ParseInt(res[i+2], 10, 64)
			jobs = append(jobs, Job{Name: res[i], Token: token, Due: time.UnixMilli(int64(math.Round(f))), Gen: gen})
		}
		return nil
	}
	for n, want := range per {
		if want == 0 {
			continue
		}
		if err := run(n, want); err != nil {
			if len(jobs) > 0 {
				break // return what is leased; the rest waits for the next Claim
			}
			return nil, fmt.Errorf("claim jobs: %w", err)
		}
	}
	// A shard whose peek held only other kinds' jobs may hold ours behind
	// them: its claim looks further.
	for n := range Shards {
		if !crowded[n] || per[n] > 0 || len(jobs) >= limit {
			continue
		}
		if err := run(n, limit-len(jobs)); err != nil && len(jobs) == 0 {
			return nil, fmt.Errorf("claim jobs: %w", err)
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].Due.Before(jobs[j].Due) })
	return jobs, nil
}

// schedTokenScript runs a change only while the token still holds the lease.
// ARGV: job, token, op ('done', 'at', 'extend' or 'leave'), ms, and for
// 'leave' the generation the job is left for.
//
// A Hurry that came while the job ran (field job + "\0hurry" in the token
// HASH) is kept: 'at' makes the job due no later than the hurried time, so
// the wake is not lost to the run's own, later, reschedule; 'done' drops it
// (the job is finished).
var schedTokenScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
local hf = ARGV[1] .. '\0hurry'
if ARGV[3] == 'done' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1], hf, ARGV[1] .. '\0gen', ARGV[1] .. '\0need')
elseif ARGV[3] == 'leave' then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1] .. '\0need', ARGV[5])
elseif ARGV[3] == 'at' then
  local at = tonumber(ARGV[4])
  local h = tonumber(redis.call('HGET', KEYS[2], hf) or '')
  if h and h < at then at = h end
  redis.call('ZADD', KEYS[1], at, ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1], hf)
else
  redis.call('ZADD', KEYS[1], 'XX', ARGV[4], ARGV[1])
end
return 1`)

func (s *Schedule) withToken(ctx context.Context, job Job, op string, at time.Time, extra ...any) error {
	ok, err := schedTokenScript.Run(ctx, s.rdb, s.jobKeys(job.Name), append([]any{job.Name, job.Token, op, schedMS(at)}, extra...)...).Int()
	if err != nil {
		return fmt.Errorf("%s job %s: %w", op, job.Name, err)
	}
	if ok == 0 {
		return fmt.Errorf("%s job %s: %w", op, job.Name, ErrJobLeaseLost)
	}
	return nil
}

// Done removes the claimed job, only while job.Token still holds its lease;
// otherwise it returns ErrJobLeaseLost and leaves the entry alone.
func (s *Schedule) Done(ctx context.Context, job Job) error {
	return s.withToken(ctx, job, "done", time.Time{})
}

// Reschedule releases the claimed job and makes it due again at at (the next
// tracking poll, a retry after backoff), only while job.Token still holds its
// lease; otherwise it returns ErrJobLeaseLost.
func (s *Schedule) Reschedule(ctx context.Context, job Job, at time.Time) error {
	return s.withToken(ctx, job, "at", at)
}

// Extend keeps the claimed job leased until until, for work that runs longer
// than the lease; it returns ErrJobLeaseLost when the lease was already lost.
func (s *Schedule) Extend(ctx context.Context, job Job, until time.Time) error {
	return s.withToken(ctx, job, "extend", until)
}

// LeaveFor gives the claimed job back untouched, due again when it was due,
// and leaves it for claimers of schema generation gen or newer (Known.Gen):
// a replica that met a record it does not read (written by a newer build)
// hands the job on instead of failing it, and never claims it again. The
// mark holds until the job is finished (Done, Remove) or Put again. It
// returns ErrJobLeaseLost when the lease was already lost.
func (s *Schedule) LeaveFor(ctx context.Context, job Job, gen int) error {
	return s.withToken(ctx, job, "leave", job.Due, gen)
}

// LeftFor returns the generation job was left for (LeaveFor), 0 when none.
func (s *Schedule) LeftFor(ctx context.Context, job string) (int, error) {
	v, err := s.rdb.HGet(ctx, s.jobKeys(job)[1], job+needField).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read job %s: %w", job, err)
	}
	return v, nil
}

// Remove deletes job whoever holds it (an order finished another way).
func (s *Schedule) Remove(ctx context.Context, job string) error {
	k := s.jobKeys(job)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, k[0], job)
		p.HDel(ctx, k[1], job, job+hurryField, job+genField, job+needField)
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove job %s: %w", job, err)
	}
	return nil
}

// Due returns when job is next due (or its lease ends, when claimed) and
// whether it is scheduled at all.
func (s *Schedule) Due(ctx context.Context, job string) (time.Time, bool, error) {
	f, err := s.rdb.ZScore(ctx, s.jobKeys(job)[0], job).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read job %s: %w", job, err)
	}
	return time.UnixMilli(int64(math.Round(f))), true, nil
}

// Len returns how many jobs are scheduled, claimed ones included.
func (s *Schedule) Len(ctx context.Context) (int64, error) {
	n, err := redisstore.SumCard(ctx, s.rdb, Shards, func(n int) string { return s.keys(n)[0] })
	if err != nil {
		return 0, fmt.Errorf("count jobs: %w", err)
	}
	return n, nil
}

// HurryResult says what Hurry did with a job.
type HurryResult int

// Outcomes of Hurry.
const (
	// HurryQueued means the job was waiting and is now due.
	HurryQueued HurryResult = iota
	// HurryRunning means a worker holds the job's lease right now; it was
	// left alone, and runs again right after: its worker's Reschedule
	// makes it due no later than the hurried time (a Done still finishes
	// it).
	HurryRunning
	// HurryMissing means the job is not scheduled at all.
	HurryMissing
)

// schedHurryScript: ARGV job, now ms. A job is running while a token holds
// it and its lease has not run out (its score is then the lease's end).
var schedHurryScript = redis.NewScript(`
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due then return 2 end
due = tonumber(due)
local now = tonumber(ARGV[2])
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 and due > now then
  redis.call('HSET', KEYS[2], ARGV[1] .. '\0hurry', ARGV[2])
  return 1
end
if due > now then redis.call('ZADD', KEYS[1], now, ARGV[1]) end
return 0`)

// Hurry makes a waiting job due at now, so the next Claim takes it. Unlike
// Put it never cuts a lease: a job a worker is running now is left to that
// worker (HurryRunning) and runs again as soon as that run reschedules it,
// whatever later time the run chose (a wake that comes while the job
// decides to wait is not lost); a job that is not scheduled stays so
// (HurryMissing; Put schedules it).
func (s *Schedule) Hurry(ctx context.Context, job string, now time.Time) (HurryResult, error) {
	n, err := schedHurryScript.Run(ctx, s.rdb, s.jobKeys(job), job, schedMS(now)).Int()
	if err != nil {
		return 0, fmt.Errorf("hurry job %s: %w", job, err)
	}
	return HurryResult(n), nil
}
