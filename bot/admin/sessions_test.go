package admin_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"shopbot/flows"
	"shopbot/state"
	"shopbot/state/redisstore/intake"
)

// An admin on /order N when the shop is upgraded: the conversation an
// earlier version of the shop stored (testdata/sessions/adminorder.json,
// written by that version for this test's first order, on message 2)
// loads, and the "Show codes"
// button of that screen, pressed with the callback data it carried then,
// shows the codes of the order it names; the same document naming
// another purchase under that number (its charge's tag) changes nothing.
func TestAdminOrderSessionWrittenBeforeStillDrives(t *testing.T) {
	doc, err := os.ReadFile("testdata/sessions/adminorder.json")
	if err != nil {
		t.Fatal(err)
	}
	s := newAdminShop(t, nil)
	s.Fake.CountedChargeIDs() // the stored document names the first charge's tag
	o := s.finished(giftCards(2), state.PayStars, state.OrderDelivered)
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	if o.ID != 1 || view.MessageID != 2 || state.ChargeTag(o.ChargeID) != "gkspp7" {
		t.Fatalf("order %d (tag %s) on message %d: the stored document is of order 1 (gkspp7) on message 2", o.ID, state.ChargeTag(o.ChargeID), view.MessageID)
	}
	ctx := context.Background()
	store := func(doc []byte) {
		t.Helper()
		if err := s.Rdb.Client.HSet(ctx, intake.NewQueue(s.Rdb.Client, s.Rdb.Prefix).ConvKey(admin), "doc", doc).Err(); err != nil {
			t.Fatal(err)
		}
	}
	showCodes := func() string {
		t.Helper()
		a := s.WaitAnswer(s.Fake.Press(admin, view.MessageID, "1:0f2il:aocd:1"))
		s.Idle(s.b)
		return a.Text
	}

	store([]byte(strings.Replace(string(doc), `"gkspp7"`, `"zzzzzz"`, 1)))
	if a := showCodes(); a != en("ao.ans.replaced_order") {
		t.Fatalf("Show codes of another purchase under the number answered %q", a)
	}
	store(doc)
	if a := showCodes(); a == en("err.outdated") {
		t.Fatal("the stored screen's button was answered as outdated")
	}
	shown := s.now(view)
	if !strings.Contains(shown.RawText, "<code>"+o.Codes[0]+"</code>") || !hasButton(shown, en("ao.btn.codes_hide")) {
		t.Fatalf("after Show codes:\n%s", renderMessage(shown))
	}
	_, after, err := s.b.Queue.Conversation(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	sess, how := flows.DecodeSession(after)
	if how != flows.Loaded || sess.Flow != "adminorders" || sess.Data["id"] != "1" || sess.Data["tag"] != "gkspp7" || sess.Data["codes"] != "1" {
		t.Fatalf("the session after the press (%v): %s", how, after)
	}
}
