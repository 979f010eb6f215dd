package sched

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
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
// lease generation (Job.Gen).
const (
	hurryField = "\x00hurry"
	genField   = "\x00gen"
)

var schedPutScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1], ARGV[1] .. '\0hurry')
return 1`)

// Put schedules job at at, replacing any earlier entry for it: the last
// write wins, even over an earlier due time. A lease held on the job is
// cancelled, so its holder's Done or Reschedule fails with ErrJobLeaseLost
// and the new time stands.
func (s *Schedule) Put(ctx context.Context, job string, at time.Time) error {
	if job == "" {
		return errors.New("schedule: empty job name")
	}
	if err := schedPutScript.Run(ctx, s.rdb, s.jobKeys(job), job, schedMS(at)).Err(); err != nil {
		return fmt.Errorf("schedule %s: %w", job, err)
	}
	return nil
}

var schedClaimScript = redis.NewScript(`
local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[3])
local out = {}
for i = 1, #r, 2 do
  redis.call('ZADD', KEYS[1], ARGV[2], r[i])
  redis.call('HSET', KEYS[2], r[i], ARGV[4])
  redis.call('HDEL', KEYS[2], r[i] .. '\0hurry')
  local g = redis.call('HINCRBY', KEYS[2], r[i] .. '\0gen', 1)
  table.insert(out, r[i])
  table.insert(out, r[i + 1])
  table.insert(out, tostring(g))
end
return out`)

// Claim takes up to limit jobs due at now, oldest first, and leases them until
// now+lease: no other Claim gets them before then. Finish each with Done,
// Reschedule or Extend before the lease runs out. It reads the due jobs of
// every shard in one pipeline, then claims in each shard as many as the
// oldest limit of them hold there.
func (s *Schedule) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	if lease <= 0 {
		return nil, errors.New("claim jobs: lease must be positive")
	}
	max := strconv.FormatInt(schedMS(now), 10)
	peeks := make([]*redis.ZSliceCmd, Shards)
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n := range Shards {
			peeks[n] = p.ZRangeByScoreWithScores(ctx, s.keys(n)[0], &redis.ZRangeBy{Min: "-inf", Max: max, Count: int64(limit)})
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
	for n, k := range per {
		if k == 0 {
			continue
		}
		res, err := schedClaimScript.Run(ctx, s.rdb, s.keys(n),
			schedMS(now), schedMS(now.Add(lease)), k, token).StringSlice()
		if err != nil && !errors.Is(err, redis.Nil) {
			if len(jobs) > 0 {
				break // return what is leased; the rest waits for the next Claim
			}
			return nil, fmt.Errorf("claim jobs: %w", err)
		}
		for i := 0; i+2 < len(res); i += 3 {
			f, _ := strconv.ParseFloat(res[i+1], 64)
			gen, _ := strconv.ParseInt(res[i+2], 10, 64)
			jobs = append(jobs, Job{Name: res[i], Token: token, Due: time.UnixMilli(int64(math.Round(f))), Gen: gen})
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].Due.Before(jobs[j].Due) })
	return jobs, nil
}

// schedTokenScript runs a change only while the token still holds the lease.
// ARGV: job, token, op ('done', 'at' or 'extend'), ms.
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
  redis.call('HDEL', KEYS[2], ARGV[1], hf, ARGV[1] .. '\0gen')
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

func (s *Schedule) withToken(ctx context.Context, job Job, op string, at time.Time) error {
	ok, err := schedTokenScript.Run(ctx, s.rdb, s.jobKeys(job.Name), job.Name, job.Token, op, schedMS(at)).Int()
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

// Remove deletes job whoever holds it (an order finished another way).
func (s *Schedule) Remove(ctx context.Context, job string) error {
	k := s.jobKeys(job)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, k[0], job)
		p.HDel(ctx, k[1], job, job+hurryField, job+genField)
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
