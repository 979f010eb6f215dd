package state

import "testing"

// A number Redis hands out again after a loss names another purchase: its
// Ref differs, and the old Ref does not match the new order.
func TestOrderRefTellsAReissuedNumberApart(t *testing.T) {
	first := &Order{ID: 42, ChargeID: "stars-charge-1"}
	second := &Order{ID: 42, ChargeID: "stars-charge-2"}
	if first.Ref() == second.Ref() {
		t.Fatalf("one ref %q for two purchases under one number", first.Ref())
	}
	id, tag, ok := ParseRef(first.Ref())
	if !ok || id != 42 {
		t.Fatalf("ParseRef(%q) = %d %q %v", first.Ref(), id, tag, ok)
	}
	if !first.Is(tag) || second.Is(tag) {
		t.Fatalf("tag %q: first %v, second %v", tag, first.Is(tag), second.Is(tag))
	}
	if id, tag, ok := ParseRef("42"); !ok || id != 42 || tag != "" || !second.Is(tag) {
		t.Fatalf("a bare number: %d %q %v", id, tag, ok)
	}
	for _, bad := range []string{"", "x", "-1", "0", "42.abc", "42.abcdefg", "4 2"} {
		if _, _, ok := ParseRef(bad); ok {
			t.Errorf("ParseRef(%q) accepted", bad)
		}
	}
	if n := len(first.Ref()); n > 30 {
		t.Errorf("ref %q is %d bytes: too long for callback data beside an action", first.Ref(), n)
	}
}
