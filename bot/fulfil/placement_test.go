package fulfil_test

import (
	"context"
	"fmt"
	"net/http"
	"shopbot/state/redisstore"
	"strings"
	"testing"
	"time"

	"shopbot/bot/bottest"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// Named tests of the placement protocol (docs/design.md, "The placement
// protocol"), one per failure it must survive.

// Redis loses everything after a snapshot taken before the placing
// intent; the POST had succeeded, and the replica that made it is gone.
// The order is back in paid with no trace of its create: the next worker
// finds the create above the order's watermark and, as the upstream echoes
// the whole purchase (the recipient and the amount of Stars), adopts it
// instead of buying again.
func TestRedisRolledBackToBeforeTheIntentAfterThePOSTBuysOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	warm := s.Run(s.Worker(nil))
	s.WaitWatermark()
	warm()
	o := s.Paid(state.Quote{Line: "stars", Item: "stars", Fields: map[string]string{"username": "durov"}, For: "@durov", Quantity: 100}, state.PayStars)
	rollback := s.Rdb.Snapshot(t)
	fp, hit := crashAt(fulfil.FailpointPlaced)
	stop := s.Run(s.Worker(fp))
	waitClosed(t, hit, "the stored upstream number")
	stop()
	rollback()
	if got, _ := s.Orders.Get(context.Background(), o.ID); got.Status != state.OrderPaid || got.UpstreamNumber != 0 {
		t.Fatalf("the rollback left %s/%d", got.Status, got.UpstreamNumber)
	}
	s.Run(s.Worker(nil))
	got := s.WaitDelivered(o.ID)
	if n := s.Sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one order (upstream %d)", n, got.UpstreamNumber)
	}
}

// The same rollback for an in-game top-up, whose order object does not
// echo the player id (and the same holds for gift cards, whose codes may
// already be in a buyer's hands): an unclaimed order of the kind cannot be
// proven this order's when Redis lost the record of its create, so the
// order waits for an admin instead of being bought twice or adopting a
// stranger's.
func TestRedisRolledBackTopUpGoesToReviewNotBoughtTwice(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	warm := s.Run(s.Worker(nil))
	s.WaitWatermark()
	warm()
	o := s.Paid(topUp("5123456789"), state.PayStars)
	rollback := s.Rdb.Snapshot(t)
	fp, hit := crashAt(fulfil.FailpointPlaced)
	stop := s.Run(s.Worker(fp))
	waitClosed(t, hit, "the stored upstream number")
	stop()
	rollback()
	s.Run(s.Worker(nil))
	got := s.WaitStatus(o.ID, state.OrderNeedsReview)
	if n := s.Sim.CreateCount(); n != 1 || got.UpstreamNumber != 0 {
		t.Fatalf("%d creates, upstream %d", n, got.UpstreamNumber)
	}
	for _, up := range s.Sim.Orders() {
		s.Foreign[up.Number] = true // the admin decides
		s.External = s.External.Add(up.ChargedUSD)
	}
}

// The same rollback of a top-up on a host whose replicas share a journal
// (JOURNAL_DIR): the replica that created the order is killed with the
// rollback, and another one puts the number back from the journal before
// any create, so the buyer is served once and nobody waits for an admin.
func TestRedisRolledBackTopUpWithTheCreatorKilledIsPutBackFromTheJournal(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	dir := t.TempDir()
	journal := func() *state.Journal {
		return keptJournal(t, dir)
	}
	warm := s.Run(s.Worker(nil))
	s.WaitWatermark()
	warm()
	o := s.Paid(topUp("5123456789"), state.PayStars)
	other := s.Paid(topUp("5987654321"), state.PayStars) // a look-alike paid at the same time
	rollback := s.Rdb.Snapshot(t)
	fp, hit := crashAt(fulfil.FailpointPlaced)
	stop := s.Run(s.NewBot(func(opt *storefront.Options) {
		cfg := s.Cfg
		cfg.Failpoint = fp
		opt.Reseller, opt.Fulfil, opt.Admins, opt.Journal = s.Client, cfg, []int64{admin}, journal()
	}))
	waitClosed(t, hit, "the stored upstream number")
	stop() // kill -9: its memory is gone
	rollback()
	s.Run(s.NewBot(func(opt *storefront.Options) {
		opt.Reseller, opt.Fulfil, opt.Admins, opt.Journal = s.Client, s.Cfg, []int64{admin}, journal()
	}))
	got, gotOther := s.WaitDelivered(o.ID), s.WaitDelivered(other.ID)
	if n := s.Sim.CreateCount(); n != 2 || got.UpstreamNumber == gotOther.UpstreamNumber {
		t.Fatalf("%d creates for two orders (upstream %d and %d)", n, got.UpstreamNumber, gotOther.UpstreamNumber)
	}
	for _, up := range s.Sim.Orders() {
		if int64(up.Number) == got.UpstreamNumber && up.Fields["player_id"] != "5123456789" ||
			int64(up.Number) == gotOther.UpstreamNumber && up.Fields["player_id"] != "5987654321" {
			t.Fatalf("upstream %d (player %s) went to the wrong order", up.Number, up.Fields["player_id"])
		}
	}
}

// An in-game top-up's create that did create but answered 502, then Redis
// rolled back to before its intent, and a look-alike top-up paid after the
// rollback. The journal still holds the lost attempt: the first order gets
// it back and adopts its own create; the second sees that create as the
// first order's (its open attempt explains it), not as a reason for
// review, and is placed once. Before the intents were journaled, the
// second went to review and the first was bought twice.
func TestRolledBackUncertainTopUpAndALookAlikeEachGetTheirOwnFromTheJournal(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	dir := t.TempDir()
	withJournal := func(fp func(string, int64) error) *storefront.Shop {
		j := keptJournal(t, dir)
		return s.NewBot(func(opt *storefront.Options) {
			cfg := s.Cfg
			cfg.Failpoint = fp
			opt.Reseller, opt.Fulfil, opt.Admins, opt.Journal = s.Client, cfg, []int64{admin}, j
		})
	}
	warm := s.Run(withJournal(nil)) // one journal for every replica, from the start
	s.WaitWatermark()
	warm()
	o := s.Paid(topUp("5123456789"), state.PayStars)
	rollback := s.Rdb.Snapshot(t)
	s.Sim.ScriptCreates(faults.CreatedThenFail(http.StatusBadGateway))
	stop := s.Run(withJournal(nil))
	if !s.UntilWithin(10*time.Second, func() bool {
		cur, err := s.Orders.Get(context.Background(), o.ID)
		return err == nil && !cur.UncertainAt.IsZero()
	}) {
		t.Fatal("the create never came back uncertain")
	}
	stop() // kill -9
	rollback()
	other := s.Paid(topUp("5987654321"), state.PayStars)
	s.Run(withJournal(nil))
	got, gotOther := s.WaitDelivered(o.ID), s.WaitDelivered(other.ID)
	if n := s.Sim.CreateCount(); n != 2 || got.UpstreamNumber == gotOther.UpstreamNumber {
		t.Fatalf("%d creates for two orders (upstream %d and %d)", n, got.UpstreamNumber, gotOther.UpstreamNumber)
	}
	for _, up := range s.Sim.Orders() {
		if int64(up.Number) == got.UpstreamNumber && up.Fields["player_id"] != "5123456789" ||
			int64(up.Number) == gotOther.UpstreamNumber && up.Fields["player_id"] != "5987654321" {
			t.Fatalf("upstream %d (player %s) went to the wrong order", up.Number, up.Fields["player_id"])
		}
	}
}

// With one journal for every replica, a create the server answered with a
// 5xx frees the kind at once: the next look-alike top-up is created while
// the first waits out its grace (before, the whole kind waited), and the
// journal keeps the two apart; each buyer gets their own, bought once.
func TestAnsweredUncertainCreateDoesNotHoldTheKindWithTheJournal(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	j := keptJournal(t, t.TempDir())
	s.Sim.ScriptCreates(faults.RefusedWith(http.StatusBadGateway), faults.Created(), faults.Created())
	s.Run(s.NewBot(func(opt *storefront.Options) {
		cfg := s.Cfg
		cfg.AnsweredGrace = 3 * time.Second // far longer than a create
		opt.Reseller, opt.Fulfil, opt.Admins, opt.Journal = s.Client, cfg, []int64{admin}, j
	}))
	s.WaitWatermark()
	first := s.Paid(topUp("5100000001"), state.PayStars)
	if !s.UntilWithin(10*time.Second, func() bool {
		cur, err := s.Orders.Get(context.Background(), first.ID)
		return err == nil && !cur.UncertainAt.IsZero()
	}) {
		t.Fatal("the first create never came back uncertain")
	}
	second := s.Paid(topUp("5100000002"), state.PayStars)
	gotSecond := s.WaitDelivered(second.ID)
	if cur, _ := s.Orders.Get(context.Background(), first.ID); cur.Status != state.OrderPlacing {
		t.Fatalf("the first order is %s: the second should have been served within the first's grace", cur.Status)
	}
	gotFirst := s.WaitDelivered(first.ID)
	if n := s.Sim.CreateCount(); n != 3 || gotFirst.UpstreamNumber == gotSecond.UpstreamNumber {
		t.Fatalf("%d create requests (want the 502, then one each), upstream %d and %d", n, gotFirst.UpstreamNumber, gotSecond.UpstreamNumber)
	}
	for _, up := range s.Sim.Orders() {
		if int64(up.Number) == gotFirst.UpstreamNumber && up.Fields["player_id"] != "5100000001" ||
			int64(up.Number) == gotSecond.UpstreamNumber && up.Fields["player_id"] != "5100000002" {
			t.Fatalf("upstream %d (player %s) went to the wrong order", up.Number, up.Fields["player_id"])
		}
	}
}

// A gateway answers 502 with its own error page while the service behind
// it still works on the create, and creates the order 1.5 s later. Only a
// 5xx in the API's own error shape says the service has finished with the
// request; a gateway's says nothing, so the worker waits out the attempt's
// deadline, finds the late order and adopts it: bought once (before, the
// 502 counted as answered, the worker placed again after the short grace,
// and the top-up was bought twice).
func TestGatewayErrorWhileTheServiceStillCreatesIsBoughtOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	j := keptJournal(t, t.TempDir())
	s.Sim.ScriptCreates(faults.GatewayThenCreated(http.StatusBadGateway, 1500*time.Millisecond), faults.Created())
	s.Run(s.withJournal(j))
	s.WaitWatermark()
	o := s.Paid(topUp("5100000007"), state.PayStars)
	got := s.WaitDelivered(o.ID)
	if !s.Until(func() bool { return s.Sim.LateCreates() == 1 }) {
		t.Fatal("the service never created the order behind the gateway")
	}
	if n := len(s.Sim.Orders()); n != 1 {
		t.Fatalf("%d upstream orders for one top-up (it now claims %d)", n, got.UpstreamNumber)
	}
}

// A 429 with Retry-After 25 s, then a create that did create but answered
// 502: the 429 comes back at once (nothing created; the worker retries
// later), and the grace counts from the 502, so the create is found and
// adopted, never placed a third time.
func TestCreate429ThenA502ThatCreatedIsAdoptedOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Sim.ScriptCreates(faults.RateLimited(25*time.Second), faults.CreatedThenFail(http.StatusBadGateway))
	s.Run(s.Worker(nil))
	o := s.Paid(giftCards(1), state.PayStars)
	// The worker dropped the refused attempt and waits out Retry-After;
	// make its job due now instead of waiting 25 s in a test.
	// The note is written before the job is rescheduled, so wait for both:
	// hurrying in between would be overwritten by the 25 s reschedule.
	if !s.UntilWithin(15*time.Second, func() bool {
		cur, _ := s.Orders.Get(context.Background(), o.ID)
		due, ok, _ := s.Sched.Due(context.Background(), fulfil.OrderJob(o.ID))
		return cur != nil && len(cur.History) > 0 && strings.Contains(cur.History[len(cur.History)-1].Note, "not sent") &&
			ok && due.After(cur.History[len(cur.History)-1].At.Add(20*time.Second)) // past the 15 s lease: rescheduled
	}) {
		t.Fatal("the 429 was not returned to the worker")
	}
	if _, err := s.Sched.Hurry(context.Background(), fulfil.OrderJob(o.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	got := s.WaitDelivered(o.ID)
	if n := s.Sim.CreateCount(); n != 2 || got.UpstreamNumber == 0 {
		t.Fatalf("%d create requests (want the 429 and the 502), upstream %d", n, got.UpstreamNumber)
	}
}

// Two buyers top up the same game with the same offer for different
// players; the first buyer's create is cut after it created. Each buyer
// ends with the upstream order of their own player id.
func TestLookAlikeTopUpsWithACutCreateEachGetTheirOwn(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Run(s.Worker(nil))
	s.WaitWatermark()
	s.Sim.ScriptCreates(faults.CreatedThenCut())
	a := s.Paid(topUp("5111111111"), state.PayStars)
	b := s.Paid(topUp("5222222222"), state.PayStars)
	ga, gb := s.WaitDelivered(a.ID), s.WaitDelivered(b.ID)
	if ga.UpstreamNumber == gb.UpstreamNumber {
		t.Fatalf("both buyers got upstream %d", ga.UpstreamNumber)
	}
	players := map[int]string{}
	for _, up := range s.Sim.Orders() {
		players[up.Number] = up.Fields["player_id"]
	}
	if players[int(ga.UpstreamNumber)] != "5111111111" || players[int(gb.UpstreamNumber)] != "5222222222" {
		t.Fatalf("buyer A got %d (player %s), buyer B got %d (player %s)", ga.UpstreamNumber, players[int(ga.UpstreamNumber)],
			gb.UpstreamNumber, players[int(gb.UpstreamNumber)])
	}
	if n := s.Sim.CreateCount(); n != 2 {
		t.Fatalf("%d creates for two orders", n)
	}
}

// The upstream's clock is 10 minutes behind ours and a create is cut after
// it created: reconciliation uses order numbers, not times, so the order
// is found and adopted.
func TestUpstreamClockTenMinutesBehindStillFindsTheCutCreate(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Sim.SetClockOffset(-10 * time.Minute)
	s.Run(s.Worker(nil))
	s.WaitWatermark()
	s.Sim.CutAfterCreate(1)
	o := s.Paid(giftCards(1), state.PayStars)
	got := s.WaitDelivered(o.ID)
	if n := s.Sim.CreateCount(); n != 1 || got.UpstreamNumber == 0 {
		t.Fatalf("%d creates, upstream %d", n, got.UpstreamNumber)
	}
}

// An upstream order nobody claims (placed by hand in the account, or a
// create whose record was lost and that no order could prove its own) is
// reported to admins once, with what it cost.
func TestOrphanUpstreamOrderIsReportedOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.OrphanEvery, s.Cfg.OrphanAfter = 20*time.Millisecond, 50*time.Millisecond
	s.Run(s.Worker(nil))
	s.WaitWatermark()
	up, err := s.Sim.PlaceOtherClientOrder("/gift-cards/order", map[string]any{
		"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Foreign[up.Number] = true
	s.External = s.External.Add(up.ChargedUSD)
	s.WaitMessage(admin, "belongs to no order of ours")
	// Wait for a later pass to move past it before counting.
	if !s.UntilWithin(5*time.Second, func() bool {
		mark, _ := s.Orders.OrphanMark(context.Background())
		return mark >= int64(up.Number)
	}) {
		t.Fatal("the orphan scan never moved past the reported order")
	}
	if n := s.CountMessages(admin, "belongs to no order of ours"); n != 1 {
		t.Fatalf("the orphan was reported %d times", n)
	}
}

// Redis loses its last second while the replica that created the upstream
// order keeps running (a Redis crash with AOF everysec, a failover to a
// replica that was behind): its canary notices, and it puts the upstream
// number back before anyone could take the order for lost, for a line
// whose order object does not tell buyers apart.
func TestRedisRolledBackWhileTheCreatorRunsPutsTheNumberBack(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.Settle = time.Minute // nobody may give up on it meanwhile
	s.Run(s.Worker(nil))
	s.WaitWatermark()
	s.Sim.SetBehavior(simcatalog.DemoTopUpOffer, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.PaidUnscheduled(topUp("5123456789"), state.PayStars)
	rollback := s.Rdb.Snapshot(t)
	if err := s.Sched.Put(context.Background(), fulfil.OrderJob(o.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	// The worker bumps its canary right after storing the number; wait for
	// that, so the rollback takes the bump with it.
	canaries, err := redisstore.NewCanary(s.Rdb.Client, s.Rdb.Prefix+"fulfil:").Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bumps := func() (n int64) {
		for _, k := range canaries {
			v, _ := s.Rdb.Client.Get(context.Background(), k).Int64()
			n += v
		}
		return n
	}
	before := bumps()
	if !s.UntilWithin(5*time.Second, func() bool { return bumps() > before }) {
		t.Fatal("the worker never bumped its canary")
	}
	rollback() // the order is back in paid, with no job
	if err := s.Sched.Put(context.Background(), fulfil.OrderJob(o.ID), time.Now()); err != nil {
		t.Fatal(err) // resume would give it one at the next start
	}
	s.Sim.ClearBehavior(simcatalog.DemoTopUpOffer)
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	got := s.WaitDelivered(o.ID)
	if n := s.Sim.CreateCount(); n != 1 || got.UpstreamNumber != placed.UpstreamNumber {
		t.Fatalf("%d creates, upstream %d (first %d)", n, got.UpstreamNumber, placed.UpstreamNumber)
	}
}

// A Redis without exact durability (here the embedded one) may lose the
// last second of writes in a crash. Codes leave only once the order's
// claim on its upstream order is older than that: a crash before then
// takes the claim and the delivered record together, and the codes have
// not reached anyone, so nobody else can be handed them later.
func TestCodesWaitUntilTheirClaimOutlivesARedisCrash(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.CodeSettle = time.Minute
	warm := s.Run(s.Worker(nil))
	s.WaitWatermark()
	warm()
	o := s.Paid(giftCards(1), state.PayStars)
	rollback := s.Rdb.Snapshot(t)
	stop := s.Run(s.Worker(nil))
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	if len(got.Codes) == 0 || got.ClaimedAt.IsZero() {
		t.Fatalf("delivered with codes %v, claimed at %v", got.Codes, got.ClaimedAt)
	}
	codes := got.Codes
	stop()
	rollback() // the crash: the claim and the delivered record are gone
	s.Run(s.Worker(nil))
	end := s.WaitStatusIn(o.ID, state.OrderDelivered, state.OrderNeedsReview)
	for _, m := range s.Fake.MessagesIn(chat) {
		for _, c := range codes {
			if strings.Contains(m.RawText, c) {
				t.Fatalf("code %q reached the buyer before its claim was settled: %q", c, m.RawText)
			}
		}
	}
	if end.Status == state.OrderNeedsReview {
		for _, up := range s.Sim.Orders() {
			s.Foreign[up.Number] = true // the admin decides
			s.External = s.External.Add(up.ChargedUSD)
		}
	}
}

// With the claim settled the codes go out, and not before.
func TestCodesGoOutOnceTheirClaimIsSettled(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.CodeSettle = 300 * time.Millisecond
	s.Run(s.Worker(nil))
	o := s.Paid(giftCards(1), state.PayStars)
	got := s.WaitDelivered(o.ID)
	if got.DeliveredAt.Sub(got.ClaimedAt) < 300*time.Millisecond {
		t.Fatalf("codes left %v after the claim", got.DeliveredAt.Sub(got.ClaimedAt))
	}
	s.WaitMessage(chat, got.Codes[0])
}

// Creates of one kind go one at a time; the next order in line is woken
// when the slot is released, not at its next poll.
func TestSlotReleaseWakesTheNextOrderOfTheKind(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.PollMin = 10 * time.Second // a poll would come far too late
	w := s.Worker(nil)
	bottest.FakePace(w.API) // the buyer's one chat gets every order's notices: paced on a fake clock, so the test does not wait for it
	s.Run(w)
	s.WaitWatermark()
	a := s.Paid(topUp("5111111111"), state.PayStars)
	b := s.Paid(topUp("5222222222"), state.PayStars)
	c := s.Paid(topUp("5333333333"), state.PayStars)
	deadline := time.Now().Add(5 * time.Second)
	for _, o := range []*state.Order{a, b, c} {
		var got *state.Order
		if !s.UntilWithin(time.Until(deadline), func() bool {
			var err error
			got, err = s.Orders.Get(context.Background(), o.ID)
			return err == nil && got.UpstreamNumber != 0
		}) {
			t.Fatalf("order %d was not placed within 5 s (%s): it waited for a poll", o.ID, got.Status)
		}
	}
	if n := s.Sim.CreateCount(); n != 3 {
		t.Fatalf("%d creates for three orders", n)
	}
}

// A placement whose listing is rate limited for long does not hold its
// kind's slot through the wait: the call returns the 429 at once, the next
// order of the kind is served meanwhile, and the first comes back after
// the Retry-After (not after the backoff of its attempts, which after a
// run of faults reaches minutes).
func TestRateLimitedListingLetsTheNextOrderOfTheKindGoFirst(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Run(s.Worker(nil))
	s.WaitWatermark()
	s.Sim.RateLimitNext(1, 20*time.Second)
	first := s.Paid(topUp("5100000011"), state.PayStars)
	ctx := context.Background()
	var due time.Time
	if !s.UntilWithin(5*time.Second, func() bool {
		at, ok, err := s.Sched.Due(ctx, fulfil.OrderJob(first.ID))
		due = at
		return err == nil && ok && time.Until(at) > 10*time.Second
	}) {
		t.Fatalf("the rate-limited order's job is due at %v, want it back after the Retry-After (about 20 s)", due)
	}
	if d := time.Until(due); d > 25*time.Second {
		t.Fatalf("the rate-limited order comes back in %v, want after its Retry-After of 20 s", d)
	}
	second := s.Paid(topUp("5100000012"), state.PayStars)
	got := s.WaitDelivered(second.ID)
	if got.DeliveredAt.IsZero() {
		t.Fatal("the next order of the kind waited for the rate-limited one")
	}
	if cur, _ := s.Orders.Get(ctx, first.ID); cur.UpstreamNumber != 0 {
		t.Fatalf("the rate-limited order was placed (upstream %d) before its Retry-After", cur.UpstreamNumber)
	}
	// As an admin's "run now" would: the first is then served too.
	if _, err := s.Sched.Hurry(ctx, fulfil.OrderJob(first.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := s.WaitDelivered(first.ID); got.DeliveredAt.IsZero() {
		t.Fatal("the rate-limited order was not delivered once run")
	}
}

// A create refused with 429 comes back after the Retry-After the upstream
// asked for, not after the worker's own (longer) retry floor: the limit
// is the account's, and waiting longer only delays the buyer.
func TestCreate429ComesBackAfterItsRetryAfter(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.RetryMin, s.Cfg.PollMin = 10*time.Second, 200*time.Millisecond
	s.Sim.ScriptCreates(faults.RateLimited(time.Second), faults.Created())
	s.Run(s.Worker(nil))
	o := s.Paid(giftCards(1), state.PayStars)
	ctx := context.Background()
	var wait time.Duration
	if !s.UntilWithin(10*time.Second, func() bool {
		cur, _ := s.Orders.Get(ctx, o.ID)
		due, ok, _ := s.Sched.Due(ctx, fulfil.OrderJob(o.ID))
		if cur == nil || len(cur.History) == 0 || !ok {
			return false
		}
		last := cur.History[len(cur.History)-1]
		wait = due.Sub(last.At)
		return strings.Contains(last.Note, "not sent") && wait > 0
	}) {
		t.Fatal("the 429 was not returned to the worker")
	}
	if wait > 3*time.Second {
		t.Fatalf("the refused create comes back in %v, want after its Retry-After of 1 s", wait)
	}
	if got := s.WaitDelivered(o.ID); got.UpstreamNumber == 0 {
		t.Fatal("not delivered after the 429")
	}
}

// Orders waiting in line for their kind's slot do not poll: they are woken
// when the slot is handed to them, even when the hand-over comes while
// the order's own job is deciding to wait (the wake is kept for right
// after that run). With the backstop and the polls an hour away, every
// order of a busy kind is still placed, one after the other.
func TestWaitersOfABusyKindAreWokenNotPolled(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.PollMin, s.Cfg.SlotWait = time.Hour, time.Hour
	b := s.Worker(nil)
	bottest.FakePace(b.API) // the buyer's one chat gets every order's notices: paced on a fake clock, so the test does not wait for it
	s.Run(b)
	s.WaitWatermark()
	var list []*state.Order
	for i := range 6 { // fewer than the worker's places
		list = append(list, s.Paid(topUp(fmt.Sprintf("51000001%02d", i)), state.PayStars))
	}
	ctx := context.Background()
	for _, o := range list {
		var got *state.Order
		if !s.UntilWithin(20*time.Second, func() bool {
			var err error
			got, err = s.Orders.Get(ctx, o.ID)
			return err == nil && got.UpstreamNumber != 0
		}) {
			t.Fatalf("order %d was never placed (%s): a waiter was not woken", o.ID, got.Status)
		}
	}
	if n := s.Sim.CreateCount(); n != len(list) {
		t.Fatalf("%d creates for %d orders", n, len(list))
	}
}
