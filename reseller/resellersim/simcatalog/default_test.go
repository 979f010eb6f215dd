package simcatalog

import (
	"strconv"
	"testing"
)

func TestDefaultCatalogIDsUnique(t *testing.T) {
	c := Default()
	seen := map[string]bool{}
	add := func(id string) {
		if id == "" || seen[id] {
			t.Fatalf("id %q is empty or repeated", id)
		}
		seen[id] = true
	}
	for _, g := range c.GiftCategories {
		add(g.ID)
		for _, k := range g.Cards {
			add(k.ID)
		}
	}
	for _, g := range c.Games {
		add(g.ID)
		for _, k := range g.Keys {
			add(k.ID)
		}
	}
	for _, g := range c.TopUpCategories {
		add(g.ID)
		for _, o := range g.Offers {
			add(o.ID)
		}
	}
	for _, m := range c.ManualServices {
		add(m.ID)
		for _, o := range m.Offers {
			add(o.ID)
		}
	}
	for _, g := range c.StoreGames {
		add(strconv.Itoa(g.AppID))
		for _, e := range g.Editions {
			add(strconv.Itoa(e.SubID))
		}
	}
	if len(c.StoreGames) <= 100 {
		t.Fatalf("%d store games, want more than one default page", len(c.StoreGames))
	}
}
