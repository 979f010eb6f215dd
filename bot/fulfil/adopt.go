package fulfil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/upstreamorder"
	"shopbot/reseller"
	"shopbot/state"
	"shopbot/state/redisstore/records"
)

// Adopting an upstream order for an order in review: the admin names the
// upstream order that is this purchase's, the shop checks the number
// (CheckAdopt: it exists upstream, is of the order's line, and is no other
// order's), the admin confirms what it is, and Adopt makes it the order's
// own. The chat's /order N and the console check and adopt through this
// one code.

// Why an upstream number cannot be adopted (AdoptRefusal.Reason).
const (
	AdoptClaimed    = "claimed"    // another order of ours owns it (Other)
	AdoptNotFound   = "not_found"  // the upstream has no such order
	AdoptWrongType  = "wrong_type" // it is of another product line (Got, Want)
	AdoptUnreadable = "unreadable" // the upstream could not be asked (Err)
)

// AdoptRefusal is why the upstream order Number cannot be adopted.
type AdoptRefusal struct {
	Reason    string
	Number    int64
	Other     int64  // AdoptClaimed: the order that owns it
	Got, Want string // AdoptWrongType: its type and the order's
	Err       error  // AdoptUnreadable: the upstream's error
}

func (e *AdoptRefusal) Error() string {
	switch e.Reason {
	case AdoptClaimed:
		return fmt.Sprintf("upstream order %d belongs to order %d", e.Number, e.Other)
	case AdoptNotFound:
		return fmt.Sprintf("upstream order %d does not exist", e.Number)
	case AdoptWrongType:
		return fmt.Sprintf("upstream order %d is a %s order, not %s", e.Number, e.Got, e.Want)
	}
	return fmt.Sprintf("upstream order %d cannot be read: %v", e.Number, e.Err)
}

func (e *AdoptRefusal) Unwrap() error { return e.Err }

// ReadOrder reads one upstream order (reseller.Client.Order).
type ReadOrder func(ctx context.Context, number int64) (*reseller.Order, error)

// CheckAdopt reads upstream order n for order o and checks that o may
// adopt it: it exists upstream, is of o's product line, and belongs to no
// other order of ours. A number that cannot be adopted is an
// *AdoptRefusal; another error is the store's.
func CheckAdopt(ctx context.Context, orders *records.Orders, read ReadOrder, o *state.Order, n int64) (*reseller.Order, error) {
	if owner, err := orders.ByUpstream(ctx, n); err == nil && owner.ID != o.ID {
		return nil, &AdoptRefusal{Reason: AdoptClaimed, Number: n, Other: owner.ID}
	} else if err != nil && !errors.Is(err, state.ErrOrderNotFound) {
		return nil, err
	}
	if read == nil {
		return nil, &AdoptRefusal{Reason: AdoptUnreadable, Number: n, Err: errors.New("no upstream configured")}
	}
	up, err := read(ctx, n)
	switch {
	case reseller.IsNotFound(err):
		return nil, &AdoptRefusal{Reason: AdoptNotFound, Number: n}
	case err != nil:
		return nil, &AdoptRefusal{Reason: AdoptUnreadable, Number: n, Err: err}
	case !up.Type.Is(upstreamorder.TypeOf(o.Line)):
		return nil, &AdoptRefusal{Reason: AdoptWrongType, Number: n, Got: string(up.Type), Want: string(upstreamorder.TypeOf(o.Line))}
	}
	return up, nil
}

// AdoptCandidate is an upstream order an admin may adopt for an order in
// review, as they confirm it.
type AdoptCandidate struct {
	Number     int64
	Type       string
	Status     string
	ChargedUSD decimal.Decimal
	CreatedAt  time.Time
	// Known says whether the order's own request is stored, so the
	// upstream order can be matched with it; Same whether it matches.
	Known, Same bool
}

// adoptTimeout bounds one read of the upstream order an admin names.
const adoptTimeout = 10 * time.Second

func (f *Fulfiller) readOrder() ReadOrder {
	if f.up == nil {
		return nil
	}
	return func(ctx context.Context, n int64) (*reseller.Order, error) {
		ctx, cancel := context.WithTimeout(ctx, adoptTimeout)
		defer cancel()
		return f.up.Order(ctx, n)
	}
}

// CheckAdoptNumber is CheckAdopt on the worker's upstream, for order o in
// review: what the admin is asked to confirm. An order no longer in review
// is state.ErrBadTransition.
func (f *Fulfiller) CheckAdoptNumber(ctx context.Context, o *state.Order, n int64) (*AdoptCandidate, error) {
	if o.Status != state.OrderNeedsReview {
		return nil, &state.TransitionError{ID: o.ID, Status: o.Status, To: state.OrderPlaced, Err: state.ErrBadTransition}
	}
	if o.UpstreamNumber != 0 && o.UpstreamNumber != n {
		return nil, ErrHasUpstream
	}
	up, err := CheckAdopt(ctx, f.orders, f.readOrder(), o, n)
	if err != nil {
		return nil, err
	}
	c := &AdoptCandidate{Number: up.Number, Type: string(up.Type), Status: string(up.Status), ChargedUSD: up.ChargedUSD.Decimal, CreatedAt: up.CreatedAt}
	c.Known, c.Same = Matches(o, up)
	return c, nil
}

// AdoptNumber checks upstream order n again (CheckAdoptNumber) and adopts
// it for order o (Adopt, audited as by), the admin having confirmed it.
func (f *Fulfiller) AdoptNumber(ctx context.Context, by state.Actor, o *state.Order, tag string, n int64) error {
	if o.Status != state.OrderNeedsReview {
		return &state.TransitionError{ID: o.ID, Status: o.Status, To: state.OrderPlaced, Err: state.ErrBadTransition}
	}
	if o.UpstreamNumber != 0 && o.UpstreamNumber != n {
		return ErrHasUpstream
	}
	up, err := CheckAdopt(ctx, f.orders, f.readOrder(), o, n)
	if err != nil {
		return err
	}
	err = f.Adopt(ctx, by, o.ID, tag, up)
	if errors.Is(err, state.ErrUpstreamClaimed) {
		other := int64(0)
		if owner, oerr := f.orders.ByUpstream(ctx, n); oerr == nil {
			other = owner.ID
		}
		return &AdoptRefusal{Reason: AdoptClaimed, Number: n, Other: other}
	}
	return err
}
