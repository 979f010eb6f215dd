package main

import (
	"fmt"
	"io"
	"time"
)

func report(w io.Writer, c config, rs []result) {
	fmt.Fprintf(w, "\n%d buyers, %d presses each after /start, think %v (GOMAXPROCS of each bot: the machine's)\n\n", c.buyers, c.presses, c.think)
	fmt.Fprintf(w, "| bot | updates (Mini App: requests) | lost | updates/s | p50 | p99 | CPU per update | peak RSS | Redis ops per update |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		extra := ""
		if r.broadcast > 0 {
			extra = fmt.Sprintf(" (%d broadcast photos sent during the run)", r.broadcast)
		}
		fmt.Fprintf(w, "| %s%s | %d | %d | %.0f | %v | %v | %v | %d MiB | %.1f |\n", r.name, extra, r.updates, r.lost, r.rate(),
			r.pct(0.50).Round(time.Millisecond), r.pct(0.99).Round(time.Millisecond), r.cpuPer().Round(time.Microsecond), r.peakRSSKB/1024, r.redisOpsPer())
		if r.problems > 0 {
			fmt.Fprintf(w, "  %s: %d Bot API schema violations\n", r.name, r.problems)
		}
		if warn := r.redis.shared(); warn != "" {
			fmt.Fprintf(w, "  %s, Redis ops per update:%s\n", r.name, warn)
		}
	}
	var floor, shop, bc, app *result
	for i := range rs {
		switch {
		case rs[i].name == "floor":
			floor = &rs[i]
		case rs[i].name == "shop":
			shop = &rs[i]
		case rs[i].name == appLabel:
			app = &rs[i]
		case rs[i].broadcast >= 0 && rs[i].name != "floor" && rs[i].name != "shop":
			bc = &rs[i]
		}
	}
	defer func() {
		if app != nil && shop != nil {
			fmt.Fprintf(w, "Mini App API request / chat update: p50 %.2fx, p99 %.2fx, CPU %.2fx\n",
				ratio(app.pct(0.50), shop.pct(0.50)), ratio(app.pct(0.99), shop.pct(0.99)), ratio(app.cpuPer(), shop.cpuPer()))
		}
		if app != nil && floor != nil {
			fmt.Fprintf(w, "Mini App API request / floor update: p99 %.2fx, CPU %.2fx\n", ratio(app.pct(0.99), floor.pct(0.99)), ratio(app.cpuPer(), floor.cpuPer()))
		}
	}()
	if floor != nil && shop != nil {
		fmt.Fprintf(w, "\nshop / floor: throughput %.2fx, p99 %.2fx, CPU per update %.2fx\n",
			shop.rate()/floor.rate(), ratio(shop.pct(0.99), floor.pct(0.99)), ratio(shop.cpuPer(), floor.cpuPer()))
	}
	if shop != nil && bc != nil {
		fmt.Fprintf(w, "shop during a broadcast / shop: p99 %.2fx, throughput %.2fx, CPU per update %.2fx (browsing p99 %v during the photo broadcast, %v without)\n",
			ratio(bc.pct(0.99), shop.pct(0.99)), bc.rate()/shop.rate(), ratio(bc.cpuPer(), shop.cpuPer()), bc.pct(0.99).Round(time.Millisecond), shop.pct(0.99).Round(time.Millisecond))
		if len(bc.roundsP99) > 1 && len(bc.roundsP99) == len(shop.roundsP99) {
			fmt.Fprintf(w, "p99 of each round, without / with the broadcast:")
			for i := range bc.roundsP99 {
				fmt.Fprintf(w, " %v / %v", shop.roundsP99[i].Round(time.Millisecond), bc.roundsP99[i].Round(time.Millisecond))
			}
			fmt.Fprintln(w)
		}
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
