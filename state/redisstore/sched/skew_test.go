package sched_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"shopbot/state/redisstore/sched"
)

// A replica of an older build claims from the same schedule as a newer
// one during an upgrade: a job of a kind it does not know is never claimed
// by it, however many of them are due ahead of its own, and stays due,
// untouched, for a claimer that knows the kind.
func TestClaimKnownLeavesJobsOfUnknownKinds(t *testing.T) {
	_, s := newSchedule(t)
	ctx := t.Context()
	// More unknown jobs than a peek reads, all due before the known ones.
	for i := range 300 {
		if err := s.Put(ctx, fmt.Sprint("future:", i), schedT0.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if err := s.Put(ctx, fmt.Sprint("order:", i), schedT0.Add(time.Second+time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	old := sched.Known{Kinds: []string{"order", "orders"}, Gen: 1}
	jobs, err := s.ClaimKnown(ctx, schedT0.Add(time.Minute), 30*time.Second, 10, old)
	if err != nil {
		t.Fatal(err)
	}
	if got := jobNames(jobs); fmt.Sprint(got) != "[order:0 order:1 order:2]" {
		t.Fatalf("the old build claimed %v, want its three order jobs only", got)
	}
	for i := range 300 {
		job := fmt.Sprint("future:", i)
		due, ok, err := s.Due(ctx, job)
		if err != nil || !ok || !due.Equal(schedT0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("%s: due %v, scheduled %v, err %v: want it untouched", job, due, ok, err)
		}
	}
	// The newer build knows the kind and takes them, oldest first.
	jobs, err = s.ClaimKnown(ctx, schedT0.Add(time.Minute), 30*time.Second, 5, sched.Known{Kinds: []string{"order", "orders", "future"}, Gen: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := jobNames(jobs); fmt.Sprint(got) != "[future:0 future:1 future:2 future:3 future:4]" {
		t.Fatalf("the newer build claimed %v", got)
	}
	if k := sched.Kind("books:reconcile"); k != "books" || sched.Kind("plain") != "plain" {
		t.Fatalf("Kind: %q", k)
	}
}

// A job whose record a replica cannot read is handed on untouched: due as
// it was, never claimed again by that generation, claimed by a newer one,
// and the mark goes when the job is finished.
func TestLeaveForHandsAJobToANewerGeneration(t *testing.T) {
	_, s := newSchedule(t)
	ctx := t.Context()
	if err := s.Put(ctx, "order:7", schedT0); err != nil {
		t.Fatal(err)
	}
	old := sched.Known{Kinds: []string{"order"}, Gen: 1}
	jobs, err := s.ClaimKnown(ctx, schedT0.Add(time.Second), 30*time.Second, 10, old)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v %v", jobNames(jobs), err)
	}
	if err := s.LeaveFor(ctx, jobs[0], 2); err != nil {
		t.Fatal(err)
	}
	if due, ok, _ := s.Due(ctx, "order:7"); !ok || !due.Equal(schedT0) {
		t.Fatalf("left job due %v (scheduled %v), want due as it was", due, ok)
	}
	if gen, _ := s.LeftFor(ctx, "order:7"); gen != 2 {
		t.Fatalf("LeftFor = %d, want 2", gen)
	}
	for _, at := range []time.Duration{time.Second, time.Hour} {
		if again, _ := s.ClaimKnown(ctx, schedT0.Add(at), 30*time.Second, 10, old); len(again) != 0 {
			t.Fatalf("the generation that left the job claimed it again: %v", jobNames(again))
		}
	}
	newer := sched.Known{Kinds: []string{"order"}, Gen: 2}
	jobs, err = s.ClaimKnown(ctx, schedT0.Add(time.Hour), 30*time.Second, 10, newer)
	if err != nil || !slices.Equal(jobNames(jobs), []string{"order:7"}) || jobs[0].Gen != 2 {
		t.Fatalf("the newer generation claimed %v (%v), want order:7 with a higher lease generation", jobs, err)
	}
	if err := s.Done(ctx, jobs[0]); err != nil {
		t.Fatal(err)
	}
	if gen, _ := s.LeftFor(ctx, "order:7"); gen != 0 {
		t.Fatalf("LeftFor after Done = %d", gen)
	}
	// Put starts a job afresh: the old generation may claim it again.
	if err := s.Put(ctx, "order:7", schedT0); err != nil {
		t.Fatal(err)
	}
	jobs, _ = s.ClaimKnown(ctx, schedT0.Add(time.Hour), 30*time.Second, 10, old)
	if err := s.LeaveFor(ctx, jobs[0], 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "order:7", schedT0); err != nil {
		t.Fatal(err)
	}
	if jobs, _ := s.ClaimKnown(ctx, schedT0.Add(time.Hour), 30*time.Second, 10, old); len(jobs) != 1 {
		t.Fatalf("a job Put again stayed left for a newer generation")
	}
	// A lease lost meanwhile makes LeaveFor change nothing.
	if err := s.LeaveFor(ctx, sched.Job{Name: "order:7", Token: "stale"}, 2); err == nil {
		t.Fatal("LeaveFor with a lost lease succeeded")
	}
}
