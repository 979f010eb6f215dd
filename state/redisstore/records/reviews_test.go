package records_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

func newReviews(t *testing.T) *records.Reviews {
	t.Helper()
	r := statetest.New(t)
	return records.NewReviews(r.Client, r.Prefix)
}

var reviewAt = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// An order is rated once, however many presses race for it.
func TestReviewAddedOnceUnderRacingPresses(t *testing.T) {
	rv := newReviews(t)
	ctx := t.Context()
	var added atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := rv.Add(ctx, state.Review{Order: "7.abcdef", User: 1, Product: "gc-steam", Stars: 1 + i%5, At: reviewAt})
			if err != nil {
				t.Error(err)
			}
			if ok {
				added.Add(1)
			}
		}()
	}
	wg.Wait()
	if added.Load() != 1 {
		t.Fatalf("%d adds succeeded, want 1", added.Load())
	}
	sum, err := rv.Summary(ctx, "gc-steam", 3)
	if err != nil || sum.Count != 1 || sum.Stars < 1 || sum.Stars > 5 {
		t.Fatalf("summary = %+v, %v", sum, err)
	}
	if _, err := rv.Add(ctx, state.Review{Order: "8.abcdef", User: 1, Product: "gc-steam", Stars: 6, At: reviewAt}); err == nil {
		t.Fatal("6 stars accepted")
	}
}

// The text is the buyer's to add, once; hiding takes a review out of its
// product's figures and showing it puts it back.
func TestReviewTextOnceAndHiding(t *testing.T) {
	rv := newReviews(t)
	ctx := t.Context()
	for i, r := range []state.Review{
		{Order: "1.aaaaaa", User: 10, Product: "key-elden", Stars: 5},
		{Order: "2.aaaaaa", User: 11, Product: "key-elden", Stars: 2},
		{Order: "3.aaaaaa", User: 12, Product: "key-elden", Stars: 4},
		{Order: "4.aaaaaa", User: 13, Product: "gc-steam", Stars: 3},
	} {
		r.At = reviewAt.Add(time.Duration(i) * time.Minute)
		if ok, err := rv.Add(ctx, r); !ok || err != nil {
			t.Fatalf("add %s: %v, %v", r.Order, ok, err)
		}
	}
	if ok, err := rv.SetText(ctx, "1.aaaaaa", 10, "<b>great</b>"); !ok || err != nil {
		t.Fatalf("set text: %v, %v", ok, err)
	}
	if ok, err := rv.SetText(ctx, "1.aaaaaa", 10, "again"); ok || err != nil {
		t.Fatalf("second text: %v, %v", ok, err)
	}
	if _, err := rv.SetText(ctx, "2.aaaaaa", 10, "not mine"); !errors.Is(err, state.ErrReviewNotYours) {
		t.Fatalf("another's review: %v", err)
	}
	if _, err := rv.SetText(ctx, "9.aaaaaa", 10, "none"); !errors.Is(err, state.ErrReviewNotFound) {
		t.Fatalf("no review: %v", err)
	}
	_, _ = rv.SetText(ctx, "3.aaaaaa", 12, "fine")

	sum, err := rv.Summary(ctx, "key-elden", 5)
	if err != nil || sum.Count != 3 || sum.Stars != 11 || len(sum.Recent) != 2 || sum.Recent[0].Text != "fine" || sum.Recent[1].Text != "<b>great</b>" {
		t.Fatalf("summary = %+v, %v", sum, err)
	}
	if ok, err := rv.SetHidden(ctx, "1.aaaaaa", true); !ok || err != nil {
		t.Fatalf("hide: %v, %v", ok, err)
	}
	if ok, _ := rv.SetHidden(ctx, "1.aaaaaa", true); ok {
		t.Fatal("hidden twice")
	}
	sum, _ = rv.Summary(ctx, "key-elden", 5)
	if sum.Count != 2 || sum.Stars != 6 || len(sum.Recent) != 1 {
		t.Fatalf("after hiding: %+v", sum)
	}
	if ok, _ := rv.SetHidden(ctx, "1.aaaaaa", false); !ok {
		t.Fatal("not shown again")
	}
	if sum, _ = rv.Summary(ctx, "key-elden", 5); sum.Count != 3 || sum.Stars != 11 {
		t.Fatalf("after showing: %+v", sum)
	}
	if _, err := rv.SetHidden(ctx, "9.aaaaaa", true); !errors.Is(err, state.ErrReviewNotFound) {
		t.Fatalf("hide none: %v", err)
	}
	latest, err := rv.Latest(ctx, 0, 3)
	if err != nil || len(latest) != 3 || latest[0].Order != "4.aaaaaa" || latest[2].Order != "2.aaaaaa" {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	got, err := rv.Get(ctx, "1.aaaaaa")
	if err != nil || got.User != 10 || got.Stars != 5 || !got.At.Equal(reviewAt) || got.Product != "key-elden" {
		t.Fatalf("get = %+v, %v", got, err)
	}
}

// A buyer is asked to rate an order once across replicas; a question that
// could not go out can be asked again.
func TestReviewAskedOnce(t *testing.T) {
	rv := newReviews(t)
	ctx := t.Context()
	if ok, err := rv.Ask(ctx, "5.abcdef"); !ok || err != nil {
		t.Fatalf("first ask: %v, %v", ok, err)
	}
	if ok, _ := rv.Ask(ctx, "5.abcdef"); ok {
		t.Fatal("asked twice")
	}
	if err := rv.Unask(ctx, "5.abcdef"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := rv.Ask(ctx, "5.abcdef"); !ok {
		t.Fatal("not asked again after Unask")
	}
}

func TestCleanReviewText(t *testing.T) {
	for in, want := range map[string]string{
		"  good\n\n game\t ": "good game",
		"a\u0000b\u200bc":    "abc",
	} {
		if got, ok := state.CleanReviewText(in); !ok || got != want {
			t.Errorf("CleanReviewText(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := state.CleanReviewText(" \n "); ok {
		t.Error("blank text kept")
	}
	long := make([]rune, state.MaxReviewText+1)
	for i := range long {
		long[i] = 'я'
	}
	if _, ok := state.CleanReviewText(string(long)); ok {
		t.Error("a text over the limit kept")
	}
}
