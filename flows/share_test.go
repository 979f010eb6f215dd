package flows

import (
	"context"
	"strings"
	"testing"
)

func TestProductLinkNamesWhatTheDeepLinkOpens(t *testing.T) {
	for _, c := range []struct{ line, cat, want string }{
		{"giftcards", "steam-us", "gc-steam-us"},
		{"keys", "42", "key-42"},
		{"gifts", "570", "game-570"},
		{"games", "pubg", "tu-pubg"},
		{"services", "psn-tr", "svc-psn-tr"},
		{"stars", "", "stars"},
		{"premium", "", "premium"},
		{"topup", "", "topup"},
	} {
		got := ProductLink(c.line, c.cat)
		if got != c.want {
			t.Errorf("ProductLink(%q, %q) = %q, want %q", c.line, c.cat, got, c.want)
		}
		if line, ok := ProductLine(got); !ok || line != c.line {
			t.Errorf("ProductLine(%q) = %q, %v; want %q", got, line, ok, c.line)
		}
	}
	if _, ok := ProductLine("nope-1"); ok {
		t.Error("an unknown prefix is a product")
	}
}

func TestStartPayloadCarriesTheInviteBesideTheLink(t *testing.T) {
	for _, c := range []struct{ invite, link, want string }{
		{"rabcdefgh", "gc-steam_us-50", "rabcdefgh_gc-steam_us-50"},
		{"", "gc-steam", "gc-steam"},
		{"rabcdefgh", "", "rabcdefgh"},
		{"rabcdefgh", "gc-" + strings.Repeat("x", 52), "gc-" + strings.Repeat("x", 52)}, // no room for both: the link
		{"rabcdefgh", "gc-" + strings.Repeat("x", 70), "rabcdefgh"},                     // the link cannot go: the invite
		{"", "gc-bad id", ""},
	} {
		got := StartPayload(c.invite, c.link)
		if got != c.want {
			t.Errorf("StartPayload(%q, %q) = %q, want %q", c.invite, c.link, got, c.want)
		}
		if len(got) > MaxStartPayload {
			t.Errorf("payload %q is over %d", got, MaxStartPayload)
		}
	}
	for _, c := range []struct{ payload, invite, link string }{
		{"rabcdefgh_gc-steam_us-50", "rabcdefgh", "gc-steam_us-50"},
		{"rabcdefgh", "rabcdefgh", ""},
		{"gc-steam", "", "gc-steam"},
		{"stars", "", "stars"},
		{"rabc_nothing", "rabc_nothing", ""},
		{"", "", ""},
	} {
		inv, link := ParseStart(c.payload)
		if inv != c.invite || link != c.link {
			t.Errorf("ParseStart(%q) = %q, %q; want %q, %q", c.payload, inv, link, c.invite, c.link)
		}
	}
}

// A /start with an invite and a deep link opens the linked line, as the
// link alone would.
func TestStartWithInviteAndLinkOpensTheLine(t *testing.T) {
	e := testEngine()
	got := ""
	e.Register("giftcards", startRecorder{&got})
	s := Session{}
	r, err := e.Handle(context.Background(), &s, command("start", "rabcdefgh_gc-steam-us"))
	if err != nil || !r.Started {
		t.Fatalf("reply = %+v, %v", r, err)
	}
	if s.Flow != "giftcards" || got != "steam-us" {
		t.Fatalf("flow %q started with %q; want giftcards with steam-us", s.Flow, got)
	}
}

type startRecorder struct{ arg *string }

func (f startRecorder) Start(_ context.Context, _ *Env, _ *Session, arg string) (*Reply, error) {
	*f.arg = arg
	return &Reply{Screen: &Screen{Text: "x"}}, nil
}
func (startRecorder) Handle(context.Context, *Env, *Session, Event) (*Reply, error) { return nil, nil }
func (startRecorder) Show(context.Context, *Env, *Session) (*Screen, error)         { return nil, nil }

// A share button carries no callback data and is never stripped.
func TestShareButtonHasNoCallbackData(t *testing.T) {
	e := testEngine()
	e.HandleCommand("share", func(_ context.Context, env *Env, _ *Session, _ Event) (*Reply, error) {
		return &Reply{Notices: []Notice{{Text: "x", Rows: [][]Button{{{Text: "Share", Share: true, Arg: "q"}}}}}, NoScreen: true}, nil
	})
	s := Session{}
	r, err := e.Handle(context.Background(), &s, command("share", ""))
	if err != nil {
		t.Fatal(err)
	}
	b := r.Notices[0].Rows[0][0]
	if !b.Share || b.Data != "" {
		t.Fatalf("share button = %+v", b)
	}
}

// A broadcast's button carries its tag before the deep link; the tag is
// cut off before the link is read, and nothing else reads as a tag.
func TestCampaignPayloadTagsTheLink(t *testing.T) {
	for _, c := range []struct{ id, link, want string }{
		{"12", "gc-steam", "bc12_gc-steam"},
		{"12", "giftcards", "bc12_giftcards"},
		{"12", "", "bc12"},
		{"7", "gc-" + strings.Repeat("x", 70), "bc7"},
	} {
		got := CampaignPayload(c.id, c.link)
		if got != c.want || len(got) > MaxStartPayload {
			t.Errorf("CampaignPayload(%q, %q) = %q, want %q", c.id, c.link, got, c.want)
		}
		id, rest := CutCampaign(got)
		if id != c.id || rest != strings.TrimPrefix(strings.TrimPrefix(c.want, "bc"+c.id), "_") {
			t.Errorf("CutCampaign(%q) = %q, %q", got, id, rest)
		}
		if _, link := ParseStart(got); link != rest {
			t.Errorf("ParseStart(%q) link %q, want %q", got, link, rest)
		}
	}
	for _, p := range []string{"bc", "bcx_gc-1", "bc_gc-1", "rabcdefgh", "gc-steam", "bc1234567890123_stars"} {
		if id, rest := CutCampaign(p); id != "" || rest != p {
			t.Errorf("CutCampaign(%q) = %q, %q: not a tag", p, id, rest)
		}
	}
}

// A /start through a broadcast's tagged link opens the linked line.
func TestStartThroughABroadcastLinkOpensTheLine(t *testing.T) {
	e := testEngine()
	got := ""
	e.Register("giftcards", startRecorder{&got})
	s := &Session{}
	if _, err := e.Handle(context.Background(), s, Event{Kind: EvCommand, Command: "start", Arg: "bc3_gc-steam"}); err != nil {
		t.Fatal(err)
	}
	if got != "steam" || s.Flow != "giftcards" {
		t.Fatalf("opened %q in flow %q", got, s.Flow)
	}
}
