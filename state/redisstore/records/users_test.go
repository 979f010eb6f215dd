package records_test

import (
	"testing"

	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

// A user's @username is kept as they spell it and found in any case, with
// or without "@"; a rename moves the index, a name given up and taken by
// another user maps to the new user (and the old user no longer shows
// it), and a user without a username, or with a name that is none, is
// found by no name.
func TestUsernamesFollowTheirUsers(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	u := records.NewUsers(r.Client, r.Prefix)
	const a, b = int64(1001), int64(1002)
	find := func(name string) int64 {
		t.Helper()
		id, ok, err := u.ByUsername(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return 0
		}
		return id
	}
	name := func(id int64) string {
		t.Helper()
		n, err := u.Username(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	set := func(id int64, n string, want bool) {
		t.Helper()
		changed, err := u.SetUsername(ctx, id, n)
		if err != nil || changed != want {
			t.Fatalf("SetUsername(%d, %q) = %v, %v; want %v", id, n, changed, err, want)
		}
	}

	set(a, "Foo_Bar", true)
	if find("@foo_bar") != a || find("FOO_BAR") != a || name(a) != "Foo_Bar" {
		t.Fatalf("after a's name: @foo_bar is %d, a is %q", find("@foo_bar"), name(a))
	}
	set(a, "Foo_Bar", false) // unchanged: nothing written
	set(a, "Quux", true)     // a renames
	if find("foo_bar") != 0 || find("quux") != a {
		t.Fatalf("after a's rename: foo_bar is %d, quux is %d", find("foo_bar"), find("quux"))
	}
	set(b, "QUUX", true) // a gave Quux up (not seen yet), b took it
	if find("quux") != b || name(b) != "QUUX" || name(a) != "" {
		t.Fatalf("after b took quux: it is %d; a is %q, b %q", find("quux"), name(a), name(b))
	}
	set(a, "Quux", true) // and a took it back: the index follows
	if find("quux") != a || name(b) != "" {
		t.Fatalf("after a took quux back: it is %d, b is %q", find("quux"), name(b))
	}
	set(a, "", true) // a has no username any more
	if find("quux") != 0 || name(a) != "" {
		t.Fatalf("after a dropped it: quux is %d, a is %q", find("quux"), name(a))
	}
	set(b, "not a name!", false) // not a username: none, as b has
	if find("not a name!") != 0 || find("") != 0 {
		t.Fatal("a name that is no username was found")
	}
	got, err := u.Usernames(ctx, []int64{a, b, 1003})
	if err != nil || len(got) != 0 {
		t.Fatalf("Usernames = %v, %v", got, err)
	}
	set(b, "bee", true)
	if got, _ := u.Usernames(ctx, []int64{a, b}); len(got) != 1 || got[b] != "bee" {
		t.Fatalf("Usernames = %v", got)
	}
}
