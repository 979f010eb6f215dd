// Package shopbot holds only this test: the rules of the import graph.
package shopbot

import (
	"go/build"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// allowed lists, for each package of the module, the packages of the
// module it may import (its tests may import more). Layers point down:
// the upstream client, the store and the texts know nothing of the shop;
// the flows know nothing of Telegram; the features (checkout, fulfil,
// orderchat, support, admin) know nothing of the bot that hosts them and
// reach Telegram and each other through small interfaces of their own;
// bot is the Telegram adapter; bot/storefront assembles the adapter and the
// features; only commands put everything together.
var allowed = map[string][]string{
	"shopbot/locales":              nil,
	"shopbot/reseller":             {"shopbot/reseller/internal/check", "shopbot/reseller/internal/money", "shopbot/reseller/internal/rawjson", "shopbot/reseller/internal/transport"},
	"shopbot/reseller/resellersim": {"shopbot/reseller/resellersim/catalog", "shopbot/reseller/resellersim/chat", "shopbot/reseller/resellersim/faults", "shopbot/reseller/resellersim/internal/wire"},
	"shopbot/state":                nil,
	"shopbot/state/statetest":      nil,
	// The Redis store beside the records: the connection, durability and
	// limits; the shop's records (orders, quotes, wallets, promos,
	// referrals, buyers); the update intake (queues, conversations,
	// leases); the job schedules; the bot's other work (caches, broadcasts,
	// order chats, alerts, support tickets), whose key layout's migration
	// moves the intake's and the schedules' keys too.
	"shopbot/state/redisstore":         nil,
	"shopbot/state/redisstore/records": {"shopbot/state", "shopbot/state/redisstore"},
	"shopbot/state/redisstore/intake":  {"shopbot/state/redisstore"},
	"shopbot/state/redisstore/sched":   {"shopbot/state/redisstore"},
	"shopbot/state/redisstore/work":    {"shopbot/state/redisstore", "shopbot/state/redisstore/intake", "shopbot/state/redisstore/sched"},
	"shopbot/bot/botapitest":           {"shopbot/bot/botapitest/calls", "shopbot/bot/botapitest/schema", "shopbot/bot/botapitest/types"},
	"shopbot/flows/golden":             nil,
	"shopbot/bot/jobs":                 {"shopbot/state/redisstore/sched"},

	// Under the upstream client: its calls, shared checks, raw readings, amounts.
	"shopbot/reseller/internal/transport": {"shopbot/reseller/internal/check"},
	"shopbot/reseller/internal/money":     {"shopbot/reseller/internal/check"},
	"shopbot/reseller/internal/check":     nil,
	"shopbot/reseller/internal/rawjson":   nil,

	// The fakes' parts, used only by the fake itself.
	"shopbot/bot/botapitest/calls":  {"shopbot/bot/botapitest/schema"},
	"shopbot/bot/botapitest/schema": {"shopbot/bot/botapitest/types"},
	"shopbot/bot/botapitest/types":  nil,

	"shopbot/reseller/resellersim/catalog":       {"shopbot/reseller/resellersim/internal/wire"},
	"shopbot/reseller/resellersim/chat":          {"shopbot/reseller/resellersim/internal/wire"},
	"shopbot/reseller/resellersim/faults":        {"shopbot/reseller/resellersim/internal/wire"},
	"shopbot/reseller/resellersim/internal/wire": nil,
	// The flows are pure: the texts only. They reach the catalog, the quote
	// store and the rate limit through interfaces of their own, which
	// bot/catalog implements over the upstream client and the store.
	"shopbot/flows": {"shopbot/locales"},
	// The shop's steps the lines share (prices, lists, quotes, promo
	// codes), then the eight lines: pure too, over the engine.
	"shopbot/flows/shop":  {"shopbot/flows", "shopbot/locales"},
	"shopbot/flows/lines": {"shopbot/flows", "shopbot/flows/shop", "shopbot/locales"},
	"shopbot/bot/catalog": {"shopbot/flows", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/work"},
	// Each product line's upstream side: its create request, what the
	// upstream echoes of it, its create call, its re-price, and what a
	// bought item is called.
	"shopbot/bot/lines": {"shopbot/locales", "shopbot/reseller", "shopbot/state"},
	// The features: never the bot, never one another but for fulfil's
	// contract (OrderJob, the chat button), which the others read.
	// The orphan scan, which fulfil runs as one of its jobs.
	"shopbot/bot/fulfil/orphans": {"shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records"},
	"shopbot/bot/fulfil":         {"shopbot/bot/fulfil/orphans", "shopbot/bot/jobs", "shopbot/bot/lines", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched"},
	"shopbot/bot/checkout":       {"shopbot/bot/fulfil", "shopbot/bot/lines", "shopbot/flows", "shopbot/flows/shop", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/orderchat":      {"shopbot/bot/fulfil", "shopbot/bot/lines", "shopbot/bot/jobs", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/support":        {"shopbot/bot/fulfil", "shopbot/bot/jobs", "shopbot/bot/lines", "shopbot/flows", "shopbot/locales", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/admin":          {"shopbot/bot/fulfil", "shopbot/bot/lines", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/work"},
	"shopbot/bot/books":          {"shopbot/bot/fulfil", "shopbot/bot/lines", "shopbot/bot/jobs", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/referral":       {"shopbot/flows", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore/records"},
	// The adapter's parts that speak no go-telegram: product images, metrics.
	"shopbot/bot/images":  {"shopbot/reseller", "shopbot/state/redisstore/work"},
	"shopbot/bot/metrics": {"shopbot/state", "shopbot/state/redisstore/intake", "shopbot/state/redisstore/records"},
	// The Telegram adapter. It builds no feature: it hands events to the
	// ones it is given (bot.Features) behind small interfaces, in the terms
	// of checkout (the payment events, the invoice and Star transactions of
	// checkout.Telegram, which it implements) and of support (an admin's
	// reply).
	"shopbot/bot": {"shopbot/bot/checkout", "shopbot/bot/images", "shopbot/bot/metrics", "shopbot/bot/support",
		"shopbot/flows", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore", "shopbot/state/redisstore/intake", "shopbot/state/redisstore/records", "shopbot/state/redisstore/work"},
	// The whole shop: the adapter and its features, assembled once.
	"shopbot/bot/storefront": {"shopbot/bot", "shopbot/bot/admin", "shopbot/bot/books", "shopbot/bot/checkout", "shopbot/bot/fulfil", "shopbot/bot/images", "shopbot/bot/orderchat",
		"shopbot/bot/referral", "shopbot/bot/support", "shopbot/flows", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	// The whole shop for tests, as storefront.New assembles it.
	"shopbot/bot/bottest": {"shopbot/bot", "shopbot/bot/botapitest", "shopbot/bot/storefront", "shopbot/flows", "shopbot/locales", "shopbot/state/statetest"},
	// The whole shop with its upstream (the simulator) and order stores,
	// for the features' end-to-end tests of fulfilment.
	"shopbot/bot/bottest/shoptest": {"shopbot/bot/botapitest", "shopbot/bot/bottest", "shopbot/bot/fulfil", "shopbot/bot/storefront", "shopbot/reseller", "shopbot/reseller/resellersim",
		"shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched"},
	"shopbot/cmd/shopbot":   {"*"},
	"shopbot/cmd/loadbench": {"shopbot/bot/botapitest", "shopbot/locales", "shopbot/reseller/resellersim", "shopbot/state/redisstore", "shopbot/state/redisstore/records"},
}

// telegramClient is the Bot API client library. Only the adapter (bot)
// speaks it; the load benchmark measures a bare bot of that library as its
// floor, so it imports it too.
const telegramClient = "github.com/go-telegram/bot"

var speaksTelegram = map[string]bool{"shopbot/bot": true, "shopbot/cmd/loadbench": true}

func TestImportsPointDown(t *testing.T) {
	seen := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files
		}
		if path == "." {
			return nil // this test
		}
		imp := "shopbot/" + filepath.ToSlash(path)
		rules, ok := allowed[imp]
		if !ok {
			t.Errorf("package %s has no import rule: add it to allowed", imp)
			return nil
		}
		seen++
		for _, dep := range pkg.Imports {
			if (dep == telegramClient || strings.HasPrefix(dep, telegramClient+"/")) && !speaksTelegram[imp] {
				t.Errorf("%s imports %s: only the Telegram adapter (shopbot/bot) may", imp, dep)
			}
			if !strings.HasPrefix(dep, "shopbot/") || slices.Contains(rules, "*") {
				continue
			}
			if !slices.Contains(rules, dep) {
				t.Errorf("%s imports %s, which its layer may not", imp, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < len(allowed) {
		t.Errorf("checked %d packages, the rules name %d: a package moved or was removed; update allowed", seen, len(allowed))
	}
}

// pure lists, for packages that must stay free of them, the packages (and
// their subpackages) that may not be among their dependencies, direct or
// not: the flows know nothing of the store, the upstream, Redis or Telegram;
// the shop's records and their rules (state) know nothing of the storage
// that keeps them (state/redisstore, Redis).
var pure = map[string][]string{
	"./state":       {"shopbot/state/redisstore", "shopbot/reseller", "github.com/redis/go-redis", "github.com/alicebob/miniredis", "github.com/go-telegram"},
	"./flows":       {"shopbot/state", "shopbot/reseller", "github.com/redis/go-redis", "github.com/go-telegram"},
	"./flows/shop":  {"shopbot/state", "shopbot/reseller", "github.com/redis/go-redis", "github.com/go-telegram"},
	"./flows/lines": {"shopbot/state", "shopbot/reseller", "github.com/redis/go-redis", "github.com/go-telegram"},
}

func TestPurePackagesHaveNoForbiddenDependencies(t *testing.T) {
	for pkg, banned := range pure {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s listed nothing", pkg)
		}
		for _, dep := range deps {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s depends on %s, which it may not (directly or through another package)", pkg, dep)
				}
			}
		}
	}
}

// redisClient is the Redis client library. Only the Redis store
// (state/redisstore and below), the test Redis (state/statetest) and the
// commands speak it; everything else reaches Redis through the store's
// typed records and work.
const redisClient = "github.com/redis/go-redis"

// speaksRedis reports whether package imp (an import path of the module)
// may import the Redis client in its non-test files.
func speaksRedis(imp string) bool {
	for _, p := range []string{"shopbot/state/redisstore", "shopbot/cmd"} {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return imp == "shopbot/state/statetest" || redisNotYetMoved[imp]
}

// redisNotYetMoved are the packages that still speak Redis themselves
// today: being moved to the store. Take a package off as soon as it no
// longer imports the client.
var redisNotYetMoved = map[string]bool{}

func TestPureOnlyTheStoreImportsRedis(t *testing.T) {
	seen := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil || path == "." {
			return nil // no Go files, or this test
		}
		imp := "shopbot/" + filepath.ToSlash(path)
		seen++
		uses := false
		for _, dep := range pkg.Imports { // the non-test files' imports
			if dep == redisClient || strings.HasPrefix(dep, redisClient+"/") {
				uses = true
				if !speaksRedis(imp) {
					t.Errorf("%s imports %s: only the Redis store (state/redisstore/...) may; use or add a typed store there", imp, dep)
				}
			}
		}
		if !uses && redisNotYetMoved[imp] {
			t.Logf("%s no longer imports %s: take it off redisNotYetMoved", imp, redisClient)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no packages checked")
	}
}
