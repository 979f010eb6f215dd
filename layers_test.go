// Package shopbot holds only this test: the rules of the import graph, of
// package names, of re-exports, of the staff gate and of session keys and
// button actions.
package shopbot

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	"shopbot/reseller/resellersim": {"shopbot/reseller/resellersim/simcatalog", "shopbot/reseller/resellersim/chat", "shopbot/reseller/resellersim/faults", "shopbot/reseller/resellersim/internal/wire"},
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
	"shopbot/bot/jobs":                 {"shopbot/state", "shopbot/state/redisstore/sched"},
	// The Mini App's initData check: the bot token and the standard library.
	"shopbot/bot/webapp/initdata": nil,

	// Under the upstream client: its calls, shared checks, raw readings, amounts.
	"shopbot/reseller/internal/transport": {"shopbot/reseller/internal/check"},
	"shopbot/reseller/internal/money":     {"shopbot/reseller/internal/check"},
	"shopbot/reseller/internal/check":     nil,
	"shopbot/reseller/internal/rawjson":   nil,

	// The fake's parts: the schema checks, the recorded calls and the Bot
	// API objects, which the tests and the demo name from their packages.
	"shopbot/bot/botapitest/calls":  {"shopbot/bot/botapitest/schema"},
	"shopbot/bot/botapitest/schema": {"shopbot/bot/botapitest/types"},
	"shopbot/bot/botapitest/types":  nil,

	"shopbot/reseller/resellersim/simcatalog":    {"shopbot/reseller/resellersim/internal/wire"},
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
	"shopbot/bot/catalog": {"shopbot/flows", "shopbot/flows/shop", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/work"},
	// Each product line's upstream side: its create request, what the
	// upstream echoes of it, its create call, its re-price, and what a
	// bought item is called.
	"shopbot/bot/upstreamorder": {"shopbot/locales", "shopbot/reseller", "shopbot/state"},
	// What every feature needs of its host, in one place: a message, a
	// file, an alert to the owners.
	"shopbot/bot/notify": {"shopbot/flows"},
	// The features: never the bot, never one another but for fulfil's
	// contract (OrderJob, the chat button), which the others read; the
	// host through bot/notify and interfaces of their own.
	// The orphan scan, which fulfil runs as one of its jobs.
	"shopbot/bot/fulfil/orphans": {"shopbot/bot/notify", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records"},
	"shopbot/bot/fulfil":         {"shopbot/bot/fulfil/orphans", "shopbot/bot/jobs", "shopbot/bot/notify", "shopbot/bot/upstreamorder", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched"},
	"shopbot/bot/checkout":       {"shopbot/bot/fulfil", "shopbot/bot/notify", "shopbot/bot/upstreamorder", "shopbot/flows", "shopbot/flows/shop", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/orderchat":      {"shopbot/bot/fulfil", "shopbot/bot/jobs", "shopbot/bot/notify", "shopbot/bot/upstreamorder", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/support":        {"shopbot/bot/fulfil", "shopbot/bot/jobs", "shopbot/bot/notify", "shopbot/bot/upstreamorder", "shopbot/flows", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/admin":          {"shopbot/bot/fulfil", "shopbot/bot/jobs", "shopbot/bot/notify", "shopbot/bot/upstreamorder", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/books":          {"shopbot/bot/fulfil", "shopbot/bot/jobs", "shopbot/bot/notify", "shopbot/bot/upstreamorder", "shopbot/flows", "shopbot/locales", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	"shopbot/bot/referral":       {"shopbot/bot/notify", "shopbot/flows", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore/records"},
	// The Mini App: a feature like the others (never the bot, never
	// checkout: invoice links through its own Payments interface), over
	// the product lines' form (flows/lines) and the orders.
	"shopbot/bot/webapp": {"shopbot/bot/upstreamorder", "shopbot/bot/webapp/initdata", "shopbot/flows", "shopbot/flows/lines", "shopbot/flows/shop", "shopbot/locales", "shopbot/state"},
	// The admin console: a feature of the Mini App's listener, over the
	// staff gate and fulfilment's admin operations; support, the books and
	// the admin side through interfaces of its own.
	"shopbot/bot/console":  {"shopbot/bot/fulfil", "shopbot/bot/upstreamorder", "shopbot/bot/webapp/initdata", "shopbot/flows", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/work"},
	"shopbot/bot/settings": {"shopbot/flows", "shopbot/state/redisstore/records"},
	"shopbot/bot/remind":   {"shopbot/bot/jobs", "shopbot/flows", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched"},
	"shopbot/bot/restock":  {"shopbot/flows", "shopbot/locales", "shopbot/state/redisstore/records"},
	"shopbot/bot/reviews":  {"shopbot/bot/upstreamorder", "shopbot/flows", "shopbot/flows/shop", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore/records"},
	// The adapter's parts that speak no go-telegram: product images, metrics.
	"shopbot/bot/images":  {"shopbot/reseller", "shopbot/state/redisstore/work"},
	"shopbot/bot/metrics": {"shopbot/state", "shopbot/state/redisstore", "shopbot/state/redisstore/intake", "shopbot/state/redisstore/records"},
	// The Telegram adapter. It builds no feature: it hands events to the
	// ones it is given (bot.Features) behind small interfaces, in the terms
	// of checkout (the payment events, the invoice and Star transactions of
	// checkout.Telegram, which it implements) and of support (an admin's
	// reply).
	"shopbot/bot": {"shopbot/bot/checkout", "shopbot/bot/images", "shopbot/bot/metrics", "shopbot/bot/support",
		"shopbot/flows", "shopbot/locales", "shopbot/state", "shopbot/state/redisstore", "shopbot/state/redisstore/intake", "shopbot/state/redisstore/records", "shopbot/state/redisstore/work"},
	// The whole shop: the adapter and its features, assembled once.
	"shopbot/bot/storefront": {"shopbot/bot", "shopbot/bot/admin", "shopbot/bot/books", "shopbot/bot/checkout", "shopbot/bot/console", "shopbot/bot/fulfil", "shopbot/bot/images", "shopbot/bot/orderchat",
		"shopbot/bot/referral", "shopbot/bot/remind", "shopbot/bot/restock", "shopbot/bot/reviews", "shopbot/bot/settings", "shopbot/bot/support", "shopbot/bot/webapp", "shopbot/flows", "shopbot/flows/shop", "shopbot/reseller", "shopbot/state", "shopbot/state/redisstore", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched", "shopbot/state/redisstore/work"},
	// The whole shop for tests, as storefront.New assembles it.
	"shopbot/bot/bottest": {"shopbot/bot", "shopbot/bot/botapitest", "shopbot/bot/botapitest/calls", "shopbot/bot/botapitest/types", "shopbot/bot/storefront", "shopbot/flows", "shopbot/locales", "shopbot/state/statetest"},
	// The whole shop with its upstream (the simulator) and order stores,
	// for the features' end-to-end tests of fulfilment.
	"shopbot/bot/bottest/shoptest": {"shopbot/bot/botapitest/types", "shopbot/bot/bottest", "shopbot/bot/fulfil", "shopbot/bot/storefront", "shopbot/reseller", "shopbot/reseller/resellersim",
		"shopbot/reseller/resellersim/simcatalog", "shopbot/state", "shopbot/state/redisstore/records", "shopbot/state/redisstore/sched"},
	"shopbot/cmd/shopbot":   {"*"},
	"shopbot/cmd/loadbench": {"shopbot/bot/botapitest", "shopbot/bot/botapitest/calls", "shopbot/bot/botapitest/types", "shopbot/bot/webapp/initdata", "shopbot/locales", "shopbot/reseller/resellersim", "shopbot/reseller/resellersim/simcatalog", "shopbot/state/redisstore", "shopbot/state/redisstore/records"},
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
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != "." && err == nil {
			return filepath.SkipDir // a module of its own (deploy/): not the shop's code
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
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != "." && err == nil {
			return filepath.SkipDir // a module of its own (deploy/): not the shop's code
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

// modulePackage is one package directory of the module.
type modulePackage struct {
	dir, path string // the directory and the import path
	pkg       *build.Package
}

// modulePackages lists the module's packages with non-test Go files, the
// root (this test) left out.
func modulePackages(t *testing.T) []modulePackage {
	t.Helper()
	var pkgs []modulePackage
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
		if err != nil || path == "." || len(pkg.GoFiles) == 0 {
			return nil // no Go files, only tests, or this test
		}
		pkgs = append(pkgs, modulePackage{path, "shopbot/" + filepath.ToSlash(path), pkg})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("no packages found")
	}
	return pkgs
}

// TestPackageNamesAreUnique fails when two packages of the module have the
// same name: a file that needs both must rename one on import, and a
// reader cannot tell from "lines.X" which one it is. Commands are all
// named main.
func TestPackageNamesAreUnique(t *testing.T) {
	seen := map[string]string{} // package name -> import path
	for _, p := range modulePackages(t) {
		if p.pkg.Name == "main" {
			continue
		}
		if other, ok := seen[p.pkg.Name]; ok {
			t.Errorf("%s and %s are both package %s: give one a name of its own", other, p.path, p.pkg.Name)
			continue
		}
		seen[p.pkg.Name] = p.path
	}
}

// Why a package may publish another package's name under its own.
const (
	resellerFacade = "reseller is the upstream client's API over its internal packages (transport, check, money), which callers outside reseller cannot import"
	simWire        = "the simulator's wire conventions live in resellersim/internal/wire, which callers outside the simulator cannot import"
)

// reExports are the names ("import/path.Name") that may stay pure
// re-exports of another package of the module (type X = p.Y, var or const
// X = p.Y, or a function that only calls p.Y with its own parameters), each
// with why callers cannot use the defining package instead.
var reExports = map[string]string{
	"shopbot/reseller.DefaultUserAgent":        resellerFacade,
	"shopbot/reseller.DefaultTimeout":          resellerFacade,
	"shopbot/reseller.DefaultMaxAttempts":      resellerFacade,
	"shopbot/reseller.DefaultBackoffBase":      resellerFacade,
	"shopbot/reseller.DefaultBackoffMax":       resellerFacade,
	"shopbot/reseller.DefaultMaxRetryWait":     resellerFacade,
	"shopbot/reseller.Option":                  resellerFacade,
	"shopbot/reseller.WithHTTPClient":          resellerFacade,
	"shopbot/reseller.WithUserAgent":           resellerFacade,
	"shopbot/reseller.WithTimeout":             resellerFacade,
	"shopbot/reseller.WithMaxAttempts":         resellerFacade,
	"shopbot/reseller.WithBackoff":             resellerFacade,
	"shopbot/reseller.LimitRetryWait":          resellerFacade,
	"shopbot/reseller.WithMaxRetryWait":        resellerFacade,
	"shopbot/reseller.WithClock":               resellerFacade,
	"shopbot/reseller.WithSleep":               resellerFacade,
	"shopbot/reseller.WithJitter":              resellerFacade,
	"shopbot/reseller.WithObserver":            resellerFacade,
	"shopbot/reseller.Error":                   resellerFacade,
	"shopbot/reseller.RateLimitError":          resellerFacade,
	"shopbot/reseller.OutcomeUnknownError":     resellerFacade,
	"shopbot/reseller.ValidationError":         resellerFacade,
	"shopbot/reseller.MinOrderQuantity":        resellerFacade,
	"shopbot/reseller.MaxOrderQuantity":        resellerFacade,
	"shopbot/reseller.MaxChatImageRedirects":   resellerFacade,
	"shopbot/reseller.DefaultChatImageTimeout": resellerFacade,
	"shopbot/reseller.ErrImageRefused":         resellerFacade,
	"shopbot/reseller.WithMediaHosts":          resellerFacade,
	"shopbot/reseller.WithImageTimeout":        resellerFacade,
	"shopbot/reseller.MoneyPlaces":             resellerFacade,
	"shopbot/reseller.Money":                   resellerFacade,
	"shopbot/reseller.ParseMoney":              resellerFacade,
	"shopbot/reseller/resellersim.PathPrefix":  simWire,
	"shopbot/reseller/resellersim.ImagesPath":  simWire,
	"shopbot/reseller/resellersim.ImageURL":    simWire,
}

// TestNoReExports fails on an exported name that only re-exports another
// package of the module: callers should name the defining package, so a
// name has one home and one doc comment. Where the layering or Go's
// internal packages forbid that import, the name goes in reExports with
// the reason.
func TestNoReExports(t *testing.T) {
	pkgs := modulePackages(t)
	names := map[string]string{} // import path -> package name
	for _, p := range pkgs {
		names[p.path] = p.pkg.Name
	}
	found := map[string]bool{}
	fset := token.NewFileSet()
	for _, p := range pkgs {
		for _, file := range p.pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, file), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range reExportsIn(f, names) {
				name := p.path + "." + re.name
				found[name] = true
				if _, ok := reExports[name]; !ok {
					t.Errorf("%s: %s only re-exports %s: use %[3]s where %[2]s is used and remove it (or list it in reExports with why the direct import is impossible)",
						fset.Position(re.pos), re.name, re.target)
				}
			}
		}
	}
	for name := range reExports {
		if !found[name] {
			t.Errorf("%s is listed in reExports but is no longer a re-export: take it off", name)
		}
	}
}

// reExport is an exported name declared only as another package's name.
type reExport struct {
	name, target string // the name declared, and what it re-exports ("pkg.Name")
	pos          token.Pos
}

// reExportsIn returns the re-exports declared in f of the module's
// packages (names maps their import paths to their package names).
func reExportsIn(f *ast.File, names map[string]string) []reExport {
	local := map[string]bool{} // names under which f imports a package of the module
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name, ok := names[path]
		if !ok {
			continue
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		local[name] = true
	}
	// other is "pkg.Name" when e names an exported name of a package of
	// the module (an instantiated generic type too).
	other := func(e ast.Expr) string {
		switch x := e.(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		if id, ok := sel.X.(*ast.Ident); ok && local[id.Name] && sel.Sel.IsExported() {
			return id.Name + "." + sel.Sel.Name
		}
		return ""
	}
	var out []reExport
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec: // type X = p.Y
					if target := other(s.Type); s.Assign.IsValid() && s.Name.IsExported() && target != "" {
						out = append(out, reExport{s.Name.Name, target, s.Pos()})
					}
				case *ast.ValueSpec: // var X = p.Y, const X = p.Y
					if len(s.Values) != len(s.Names) {
						continue
					}
					for i, v := range s.Values {
						if target := other(v); s.Names[i].IsExported() && target != "" {
							out = append(out, reExport{s.Names[i].Name, target, s.Names[i].Pos()})
						}
					}
				}
			}
		case *ast.FuncDecl: // func X(a, b) R { return p.Y(a, b) }
			if d.Recv != nil || !d.Name.IsExported() || d.Body == nil || len(d.Body.List) != 1 {
				continue
			}
			var call *ast.CallExpr
			switch st := d.Body.List[0].(type) {
			case *ast.ReturnStmt:
				if len(st.Results) == 1 {
					call, _ = st.Results[0].(*ast.CallExpr)
				}
			case *ast.ExprStmt:
				call, _ = st.X.(*ast.CallExpr)
			}
			if call == nil || other(call.Fun) == "" || !passesItsParams(d.Type.Params, call) {
				continue
			}
			out = append(out, reExport{d.Name.Name, other(call.Fun), d.Pos()})
		}
	}
	return out
}

// passesItsParams reports whether call's arguments are exactly params, in
// order (a variadic one passed on with ...).
func passesItsParams(params *ast.FieldList, call *ast.CallExpr) bool {
	var names []string
	variadic := false
	for _, field := range params.List {
		_, variadic = field.Type.(*ast.Ellipsis)
		for _, n := range field.Names {
			names = append(names, n.Name)
		}
	}
	if len(names) != len(call.Args) || call.Ellipsis.IsValid() != variadic {
		return false
	}
	for i, arg := range call.Args {
		if id, ok := arg.(*ast.Ident); !ok || id.Name != names[i] {
			return false
		}
	}
	return true
}

// staffNameRE matches names of staff lists and checks: a user id compared
// with such a list is an admin check of its own.
var staffNameRE = regexp.MustCompile(`(?i)admin|staff|owner|agent|accountant`)

// adminCheckFuncRE matches the names of functions that would be admin
// checks of their own.
var adminCheckFuncRE = regexp.MustCompile(`(?i)^(is|require|check|must|only)_?(admin|staff|owner)|(admin|staff|owner)_?only$`)

// rolesGiven are the functions outside flows that look users up in the
// staff: the adapter giving each update's sender their roles, and the
// console giving each verified request's user theirs (the gate's input).
var rolesGiven = map[string]bool{"bot/update.go:flowUser": true, "bot/console/auth.go:userOf": true}

// TestNoAdminCheckOutsideTheGate fails when a non-test file outside
// package flows decides by itself who is staff. The staff gate is flows'
// (flows/gate.go): admin commands, buttons and flows are registered with
// the perm they need and the engine checks it; a handler serving buyers
// and staff asks User.Can(perm). So nowhere else may read a user's roles
// or an admin flag (User.Roles, User.Admin), answer as an unknown command
// (flows.UnknownCommand, "err.unknown_command": the gate's refusal), define
// a function named like an admin check, or look a user id up in a staff
// list.
func TestNoAdminCheckOutsideTheGate(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || path == "flows") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		at := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
		fn := "" // the enclosing function
		ast.Inspect(f, func(n ast.Node) bool {
			if d, ok := n.(*ast.FuncDecl); ok {
				fn = d.Name.Name
			}
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if (n.Sel.Name == "Admin" || n.Sel.Name == "Roles") && isUser(n.X) {
					t.Errorf("%s: reads .User.%s: ask env.User.Can(flows.PermX), or register with the perm (flows.Engine.AdminCommand, AdminButton, AdminFlow)", at(n), n.Sel.Name)
				}
				if n.Sel.Name == "UnknownCommand" {
					t.Errorf("%s: answers as an unknown command itself: the gate does (register with the perm)", at(n))
				}
			case *ast.BasicLit:
				if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && v == "err.unknown_command" {
					t.Errorf("%s: answers as an unknown command itself: the gate does (register with the perm)", at(n))
				}
			case *ast.FuncDecl:
				if adminCheckFuncRE.MatchString(n.Name.Name) {
					t.Errorf("%s: func %s looks like an admin check of its own: the gate is flows' (User.Can)", at(n), n.Name.Name)
				}
			case *ast.CallExpr, *ast.IndexExpr:
				if staffLookup(n) && !rolesGiven[filepath.ToSlash(path)+":"+fn] {
					t.Errorf("%s: looks a user id up in a staff list: ask env.User.Can(flows.PermX)", at(n))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("checked %d files", files)
	}
}

// isUser reports whether x names a user (env.User, ev.User, User).
func isUser(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "User"
	case *ast.Ident:
		return x.Name == "User" || x.Name == "user" || x.Name == "u"
	}
	return false
}

// staffLookup reports whether n (a call or an index) mixes a user's id
// (*.User.ID) with something named like a staff list: admins[env.User.ID],
// slices.Contains(admins, ev.User.ID).
func staffLookup(n ast.Node) bool {
	var userID, staff bool
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false // a handler's body is looked at call by call
		case *ast.SelectorExpr:
			if m.Sel.Name == "ID" && isUser(m.X) {
				userID = true
				return false
			}
		case *ast.Ident:
			staff = staff || staffNameRE.MatchString(m.Name)
		}
		return true
	})
	return userID && staff
}

// sessionAccessors are flows.Session's methods that take a flows.Key
// first.
var sessionAccessors = map[string]bool{"Get": true, "Set": true, "Int": true, "Int64": true, "SetInt": true, "List": true, "SetList": true, "Decimal": true}

// actionTakers are the functions and methods that take a flows.Action,
// with the index of that argument.
var actionTakers = map[string]int{"EncodeCallback": 1, "HandleButton": 0, "AdminButton": 0, "Action": 0}

// TestNoInlineSessionKeysOrActions fails on a session variable's key or a
// button's action spelled inline in a non-test file that imports flows: a
// string literal given to a Session accessor (s.Get("q")), as a button's
// Action, compared with or switched on an Action, registered as one, or
// converted to flows.Key or flows.Action outside a const declaration. Each
// flow names its keys and actions as typed constants (flows.Key,
// flows.Action) with their doc comments: their strings are what live
// sessions and buttons hold, so they are written once.
func TestNoInlineSessionKeysOrActions(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		inFlows := f.Name.Name == "flows" && filepath.Dir(path) == "flows"
		usesFlows := inFlows
		for _, im := range f.Imports {
			usesFlows = usesFlows || im.Path.Value == `"shopbot/flows"`
		}
		if !usesFlows {
			return nil
		}
		files++
		at := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
		lit := func(e ast.Expr) bool {
			found := false
			ast.Inspect(e, func(n ast.Node) bool {
				if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
					found = true
				}
				return !found
			})
			return found
		}
		// isType reports whether e names flows.Key or flows.Action (Key,
		// Action inside flows).
		isType := func(e ast.Expr) bool {
			switch x := e.(type) {
			case *ast.SelectorExpr:
				id, ok := x.X.(*ast.Ident)
				return ok && id.Name == "flows" && (x.Sel.Name == "Key" || x.Sel.Name == "Action")
			case *ast.Ident:
				return inFlows && (x.Name == "Key" || x.Name == "Action")
			}
			return false
		}
		isAction := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			return ok && sel.Sel.Name == "Action"
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				if n.Tok == token.CONST {
					return false // where keys and actions are named
				}
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				if isType(n.Fun) && len(n.Args) == 1 && lit(n.Args[0]) {
					t.Errorf("%s: a key or action spelled inline: name it as a typed constant", at(n))
				}
				if sessionAccessors[name] && len(n.Args) > 0 && lit(n.Args[0]) {
					// A session is s (or sess, session) throughout; other
					// Get and Set calls (HTTP headers, URL queries) are not.
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "s" || id.Name == "sess" || id.Name == "session") {
							t.Errorf("%s: session variable %s spelled inline: name its key (a flows.Key constant)", at(n), name)
						}
					}
				}
				if i, ok := actionTakers[name]; ok && len(n.Args) > i && lit(n.Args[i]) {
					t.Errorf("%s: action given to %s inline: name it (a flows.Action constant)", at(n), name)
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Action" && lit(n.Value) {
					t.Errorf("%s: a button's action spelled inline: name it (a flows.Action constant)", at(n))
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isAction(n.X) && lit(n.Y) || isAction(n.Y) && lit(n.X)) {
					t.Errorf("%s: an action compared with a literal: name it (a flows.Action constant)", at(n))
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isAction(n.Tag) {
					for _, c := range n.Body.List {
						for _, e := range c.(*ast.CaseClause).List {
							if lit(e) {
								t.Errorf("%s: an action switched on with a literal case: name it (a flows.Action constant)", at(e))
							}
						}
					}
				}
			case *ast.CompositeLit:
				if m, ok := n.Type.(*ast.MapType); ok && isType(m.Key) {
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok && lit(kv.Key) {
							t.Errorf("%s: a key or action spelled inline as a map key: name it", at(kv))
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 40 {
		t.Fatalf("checked %d files", files)
	}
}
