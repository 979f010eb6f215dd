package sched_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"shopbot/state/redisstore/sched"

	"shopbot/state/statetest"
)

func newSchedule(t *testing.T) (*statetest.Redis, *sched.Schedule) {
	t.Helper()
	r := statetest.New(t)
	return r, sched.NewSchedule(r.Client, r.Prefix)
}

var schedT0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func jobNames(jobs []sched.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

func TestScheduleClaimsOnlyDueJobsOldestFirst(t *testing.T) {
	_, s := newSchedule(t)
	ctx := t.Context()
	for i, at := range []time.Duration{3 * time.Second, time.Second, time.Minute, 2 * time.Second} {
		if err := s.Put(ctx, fmt.Sprint("track:", i), schedT0.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := s.Claim(ctx, schedT0.Add(5*time.Second), time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(jobNames(jobs)) != "[track:1 track:3 track:0]" || !jobs[0].Due.Equal(schedT0.Add(time.Second)) {
		t.Fatalf("claimed %v (first due %v)", jobNames(jobs), jobs[0].Due)
	}
	if more, _ := s.Claim(ctx, schedT0.Add(5*time.Second), time.Minute, 10); len(more) != 0 {
		t.Fatalf("leased jobs claimed again: %v", jobNames(more))
	}
	if n, _ := s.Len(ctx); n != 4 {
		t.Fatalf("Len %d, want 4 (claimed jobs stay until Done)", n)
	}
}

func TestScheduleLeaseExpiryReturnsTheJob(t *testing.T) {
	_, s := newSchedule(t)
	ctx := t.Context()
	if err := s.Put(ctx, "place:9", schedT0); err != nil {
		t.Fatal(err)
	}
	lease := 30 * time.Second
	first, _ := s.Claim(ctx, schedT0, lease, 1)
	if len(first) != 1 {
		t.Fatalf("first claim %v", first)
	}
	// The worker dies. Before the lease ends nobody gets the job...
	if got, _ := s.Claim(ctx, schedT0.Add(lease-time.Millisecond), lease, 1); len(got) != 0 {
		t.Fatalf("claimed inside the lease: %v", got)
	}
	// ...after it, another replica does, with a new token.
	second, _ := s.Claim(ctx, schedT0.Add(lease), lease, 1)
	if len(second) != 1 || second[0].Name != "place:9" || second[0].Token == first[0].Token {
		t.Fatalf("after the lease: %+v", second)
	}
	// Its lease is of a later generation: the fencing token of what the
	// holder does outside Redis.
	if first[0].Gen < 1 || second[0].Gen <= first[0].Gen {
		t.Fatalf("lease generations %d then %d", first[0].Gen, second[0].Gen)
	}
	// The dead worker's late calls change nothing.
	for name, err := range map[string]error{
		"Done":       s.Done(ctx, first[0]),
		"Reschedule": s.Reschedule(ctx, first[0], schedT0),
		"Extend":     s.Extend(ctx, first[0], schedT0.Add(time.Hour)),
	} {
		if !errors.Is(err, sched.ErrJobLeaseLost) {
			t.Errorf("stale %s: %v", name, err)
		}
	}
	if due, ok, _ := s.Due(ctx, "place:9"); !ok || !due.Equal(schedT0.Add(2*lease)) {
		t.Fatalf("due %v %v, want the second lease's end", due, ok)
	}
	if err := s.Done(ctx, second[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Due(ctx, "place:9"); ok {
		t.Fatal("job still scheduled after Done")
	}
}

func TestScheduleRescheduleExtendAndPut(t *testing.T) {
	_, s := newSchedule(t)
	ctx := t.Context()
	_ = s.Put(ctx, "track:1", schedT0)
	jobs, _ := s.Claim(ctx, schedT0, time.Minute, 5)
	if err := s.Extend(ctx, jobs[0], schedT0.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Claim(ctx, schedT0.Add(2*time.Minute), time.Minute, 5); len(got) != 0 {
		t.Fatalf("extended job claimed: %v", got)
	}
	if err := s.Reschedule(ctx, jobs[0], schedT0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Done(ctx, jobs[0]); !errors.Is(err, sched.ErrJobLeaseLost) {
		t.Fatalf("Done after Reschedule released the lease: %v", err)
	}
	again, _ := s.Claim(ctx, schedT0.Add(10*time.Second), time.Minute, 5)
	if len(again) != 1 {
		t.Fatalf("rescheduled job not claimed: %v", again)
	}
	// Last write wins: a Put while leased sets the time and voids the lease.
	if err := s.Put(ctx, "track:1", schedT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Done(ctx, again[0]); !errors.Is(err, sched.ErrJobLeaseLost) {
		t.Fatalf("Done after Put: %v", err)
	}
	if due, _, _ := s.Due(ctx, "track:1"); !due.Equal(schedT0.Add(time.Hour)) {
		t.Fatalf("due %v after Put", due)
	}
	if err := s.Put(ctx, "track:1", schedT0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if due, _, _ := s.Due(ctx, "track:1"); !due.Equal(schedT0.Add(time.Second)) {
		t.Fatalf("due %v after the second Put, want the last write", due)
	}
	if err := s.Remove(ctx, "track:1"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Len(ctx); n != 0 {
		t.Fatalf("Len %d after Remove", n)
	}
}

func TestScheduleConcurrentClaimersNeverShareAJob(t *testing.T) {
	r, s := newSchedule(t)
	ctx := t.Context()
	const jobs = 200
	for i := range jobs {
		if err := s.Put(ctx, fmt.Sprint("track:", i), schedT0.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		replica := sched.NewSchedule(r.Client, r.Prefix) // each worker as its own replica
		wg.Go(func() {
			for {
				got, err := replica.Claim(ctx, schedT0.Add(time.Second), time.Hour, 1+w%5)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					seen[j.Name]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != jobs {
		t.Fatalf("%d distinct jobs claimed, want %d", len(seen), jobs)
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("job %s claimed %d times", name, n)
		}
	}
}

func TestScheduleHurryMakesAWaitingJobDueButLeavesARunningOneAlone(t *testing.T) {
	_, s := newSchedule(t)
	ctx := t.Context()
	if got, err := s.Hurry(ctx, "order:1", schedT0); err != nil || got != sched.HurryMissing {
		t.Fatalf("unscheduled job: %v, %v", got, err)
	}
	if err := s.Put(ctx, "order:1", schedT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Hurry(ctx, "order:1", schedT0); err != nil || got != sched.HurryQueued {
		t.Fatalf("waiting job: %v, %v", got, err)
	}
	if at, _, _ := s.Due(ctx, "order:1"); !at.Equal(schedT0) {
		t.Fatalf("due %v after Hurry, want %v", at, schedT0)
	}
	jobs, _ := s.Claim(ctx, schedT0, time.Minute, 1)
	if len(jobs) != 1 {
		t.Fatalf("claimed %v", jobNames(jobs))
	}
	if got, _ := s.Hurry(ctx, "order:1", schedT0.Add(time.Second)); got != sched.HurryRunning {
		t.Fatalf("leased job: %v", got)
	}
	if err := s.Reschedule(ctx, jobs[0], schedT0.Add(time.Hour)); err != nil {
		t.Fatalf("Hurry cut the lease: %v", err)
	}
	// A lease that ran out (its worker died) counts as waiting.
	jobs, _ = s.Claim(ctx, schedT0.Add(time.Hour), time.Minute, 1)
	if got, _ := s.Hurry(ctx, "order:1", schedT0.Add(time.Hour+2*time.Minute)); len(jobs) != 1 || got != sched.HurryQueued {
		t.Fatalf("expired lease: %v", got)
	}
}

// A wake that comes while the job runs and decides to wait (a placement
// queued for its kind's slot, handed the slot a moment later) must not be
// lost to the run's own later reschedule: the job comes back at once.
func TestScheduleHurryWhileRunningIsKeptByTheReschedule(t *testing.T) {
	_, s := newSchedule(t)
	ctx := t.Context()
	if err := s.Put(ctx, "order:1", schedT0); err != nil {
		t.Fatal(err)
	}
	jobs, _ := s.Claim(ctx, schedT0, time.Minute, 1)
	if len(jobs) != 1 {
		t.Fatalf("claimed %v", jobNames(jobs))
	}
	if got, _ := s.Hurry(ctx, "order:1", schedT0.Add(time.Second)); got != sched.HurryRunning {
		t.Fatalf("leased job: %v", got)
	}
	if err := s.Reschedule(ctx, jobs[0], schedT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := s.Due(ctx, "order:1"); !at.Equal(schedT0.Add(time.Second)) {
		t.Fatalf("due %v after a Hurry during the run, want the hurried %v", at, schedT0.Add(time.Second))
	}
	// The wake is used once: the next run's reschedule stands.
	jobs, _ = s.Claim(ctx, schedT0.Add(time.Second), time.Minute, 1)
	if len(jobs) != 1 {
		t.Fatalf("claimed %v", jobNames(jobs))
	}
	if err := s.Reschedule(ctx, jobs[0], schedT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := s.Due(ctx, "order:1"); !at.Equal(schedT0.Add(time.Hour)) {
		t.Fatalf("due %v, want %v", at, schedT0.Add(time.Hour))
	}
	// An earlier reschedule than the hurried time stands too; Done drops
	// the wake with the job.
	jobs, _ = s.Claim(ctx, schedT0.Add(time.Hour), time.Minute, 1)
	_, _ = s.Hurry(ctx, "order:1", schedT0.Add(2*time.Hour))
	if err := s.Reschedule(ctx, jobs[0], schedT0.Add(time.Hour+time.Second)); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := s.Due(ctx, "order:1"); !at.Equal(schedT0.Add(time.Hour + time.Second)) {
		t.Fatalf("due %v, want the earlier reschedule", at)
	}
	jobs, _ = s.Claim(ctx, schedT0.Add(2*time.Hour), time.Minute, 1)
	_, _ = s.Hurry(ctx, "order:1", schedT0.Add(2*time.Hour))
	if err := s.Done(ctx, jobs[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Due(ctx, "order:1"); ok {
		t.Fatal("a finished job came back")
	}
	if err := s.Put(ctx, "order:1", schedT0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	jobs, _ = s.Claim(ctx, schedT0.Add(3*time.Hour), time.Minute, 1)
	if err := s.Reschedule(ctx, jobs[0], schedT0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := s.Due(ctx, "order:1"); !at.Equal(schedT0.Add(4 * time.Hour)) {
		t.Fatalf("due %v: a wake outlived its job", at)
	}
}

func TestNamedSchedulesDoNotShareJobs(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	orders := sched.NewSchedule(r.Client, r.Prefix)
	chats := sched.NewNamedSchedule(r.Client, r.Prefix, "chat")
	if err := orders.Put(ctx, "order:1", schedT0); err != nil {
		t.Fatal(err)
	}
	if err := chats.Put(ctx, "chat:1", schedT0); err != nil {
		t.Fatal(err)
	}
	got, err := orders.Claim(ctx, schedT0, time.Minute, 10)
	if err != nil || len(got) != 1 || got[0].Name != "order:1" {
		t.Fatalf("order schedule claimed %v (%v)", jobNames(got), err)
	}
	got, err = chats.Claim(ctx, schedT0, time.Minute, 10)
	if err != nil || len(got) != 1 || got[0].Name != "chat:1" {
		t.Fatalf("chat schedule claimed %v (%v)", jobNames(got), err)
	}
	if _, ok, _ := orders.Due(ctx, "chat:1"); ok {
		t.Fatal("a chat job is visible in the order schedule")
	}
	// A lease on one schedule is unknown to the other.
	if err := chats.Done(ctx, got[0]); err != nil {
		t.Fatal(err)
	}
	if n, _ := orders.Len(ctx); n != 1 {
		t.Fatalf("order schedule has %d jobs after the chat job finished", n)
	}
}
