package lines_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/reseller/resellersim/simcatalog"
)

// press sends the callback data a button carried (as Telegram hands it
// back) and records the reply.
func (w *world) press(data string) {
	w.t.Helper()
	cb, ok := flows.DecodeCallback(data)
	if !ok {
		w.t.Fatalf("bad callback data %q", data)
	}
	ev := flows.Event{Kind: flows.EvButton, Button: cb, Now: w.now, User: w.user}
	r, err := w.e.Handle(context.Background(), &w.s, ev)
	if err != nil {
		w.t.Fatalf("press %q: %v", data, err)
	}
	if r.Stale {
		w.t.Fatalf("press %q: answered as stale", data)
	}
	if r.Screen != nil {
		w.last = r
	}
	w.record("press "+data, r)
}

// TestSessionsWrittenBeforeStillDrive loads conversations stored by an
// earlier version of the shop (testdata/sessions: documents that version
// wrote, its session keys and callback data spelled inline) and drives
// them on with the callback data their buttons carried: a chat in the
// middle of a flow when the shop is upgraded carries on where it was.
// Each document also comes back byte for byte when stored again.
func TestSessionsWrittenBeforeStillDrive(t *testing.T) {
	for _, c := range []struct {
		name, doc string // the case, and its document under testdata/sessions
		// drive acts on the loaded session (presses carry the stored
		// nonce) and checks where it led.
		drive func(t *testing.T, w *world)
	}{
		{"answer the last field", "fields", func(t *testing.T, w *world) {
			// At the second field of a two-field top-up, the first answered.
			w.do("2001")
			q := lastQuote(t, w)
			if q.Category != simcatalog.DemoTopUpCategoryTwoFields || q.Item != "mobile-legends-global-86" ||
				q.Fields["user_id"] != "12345" || q.Fields["zone_id"] != "2001" || len(q.Fields) != 2 {
				t.Fatalf("quote = %+v", q)
			}
			atStep("games", shop.StepConfirm)(t, w)
		}},
		{"pick on a filtered list", "keys_filter", func(t *testing.T, w *world) {
			// The region filter CIS on, its first game picked by index.
			w.press("1:nd:i:0")
			atStep("keys", lines.GkOffers)(t, w)
			if !strings.Contains(w.last.Screen.Text, "ELDEN RING") || w.s.Data["game"] != "elden-ring-cis-steam" || w.s.Data["region"] != "CIS" {
				t.Fatalf("picked %q, region %q: %s", w.s.Data["game"], w.s.Data["region"], w.last.Screen.Text)
			}
		}},
		{"clear the filters", "keys_filter", func(t *testing.T, w *world) {
			w.press("1:nd:clr")
			if _, ok := w.s.Data["region"]; ok || !strings.Contains(w.last.Screen.Text, "Region: any") {
				t.Fatalf("the region filter stayed: %v\n%s", w.s.Data, w.last.Screen.Text)
			}
		}},
		{"next page", "keys_page", func(t *testing.T, w *world) {
			w.press("1:nc:pg:2")
			if w.s.Data["page"] != "2" || !strings.Contains(w.last.Screen.Text, "Page 3") {
				t.Fatalf("page %q:\n%s", w.s.Data["page"], w.last.Screen.Text)
			}
		}},
		{"pick on the second page", "keys_page", func(t *testing.T, w *world) {
			// On the second page of the games: its last entry picked,
			// then Back to the list, on its first page.
			w.press("1:nc:i:7")
			if w.s.Data["game"] != "minecraft-global-microsoft" {
				t.Fatalf("picked %q", w.s.Data["game"])
			}
			w.do("tap:⬅️")
			if w.s.Data["page"] != "" {
				t.Fatalf("back kept page %q", w.s.Data["page"])
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("testdata", "sessions", c.doc+".json"))
			if err != nil {
				t.Fatal(err)
			}
			s, how := flows.DecodeSession(doc)
			if how != flows.Loaded {
				t.Fatalf("loaded as %v", how)
			}
			if again := s.Encode(); !bytes.Equal(again, doc) {
				t.Fatalf("stored again as\n%s\nwas\n%s", again, doc)
			}
			w := newWorld(t)
			w.s = s
			c.drive(t, w)
		})
	}
}
