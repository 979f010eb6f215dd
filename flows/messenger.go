package flows

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/locales"
)

func decimalInt(n int) decimal.Decimal { return decimal.NewFromInt(int64(n)) }

// The bounds of one Stars purchase, whatever the upstream allows.
const (
	MinStars = 50
	MaxStars = 10000
)

// usernameRe is Telegram's username rule: 5 to 32 letters, digits and
// underscores, starting with a letter, not ending with an underscore.
var usernameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{3,30}[A-Za-z0-9]$`)

// ParseUsername reads a Telegram username given as @name, name or a
// t.me/name link and returns it without the @.
func ParseUsername(text string) (string, bool) {
	t := strings.TrimSpace(text)
	cut := func(p string) bool {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			t = t[len(p):]
			return true
		}
		return false
	}
	_ = cut("https://") || cut("http://")
	_ = cut("www.")
	if cut("t.me/") || cut("telegram.me/") || cut("telegram.dog/") {
		t = strings.TrimSuffix(t, "/")
	}
	t = strings.TrimPrefix(t, "@")
	if !usernameRe.MatchString(t) || strings.Contains(t, "__") {
		return "", false
	}
	return t, true
}

// Messenger steps.
const (
	msUser = "user"
	msQty  = "qty"
	msPlan = "plan"
)

// askUser handles the recipient step shared by Stars and Premium: typed
// text or the "for me" button. It reports false when ev is not an answer.
func askUser(env *Env, s *Session, ev Event) (reason string, ok bool) {
	var name string
	switch {
	case ev.Kind == EvButton && ev.Button.Action == actForMe:
		if env.User.Username == "" {
			return "", false
		}
		name = env.User.Username
	case ev.Kind != EvButton:
		n, valid := ParseUsername(ev.Text)
		if !valid {
			return env.T("user.bad"), true
		}
		name = n
	default:
		return "", false
	}
	s.Set("user", name)
	return "", true
}

// userScreen asks for the recipient's @username.
func userScreen(env *Env, key string) *Screen {
	sc := &Screen{Text: env.T(key)}
	if u := env.User.Username; u != "" && usernameRe.MatchString(u) {
		sc.Rows = append(sc.Rows, []Button{{Text: env.T("btn.for_me", "username", u), Action: actForMe}})
	}
	sc.Rows = append(sc.Rows, navRow(env))
	return sc
}

// Stars is the Telegram Stars line: recipient, then 50..10000 Stars.
type Stars struct{ *Shop }

// Start asks for the recipient.
func (f *Stars) Start(ctx context.Context, env *Env, s *Session, _ string) (*Reply, error) {
	s.Step = msUser
	return f.show(ctx, env, f, s)
}

// Handle takes the recipient and the quantity.
func (f *Stars) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, msQty); ok {
		return r, err
	}
	switch s.Step {
	case msUser:
		if reason, ok := askUser(env, s, ev); ok {
			if reason != "" {
				return f.again(ctx, env, f, s, reason)
			}
			s.Goto(msQty)
			return f.show(ctx, env, f, s)
		}
	case msQty:
		if ev.Kind != EvButton || ev.Button.Action == actQty {
			text := ev.Text
			if ev.Kind == EvButton {
				text = ev.Button.Arg
			}
			n, ok := parseQuantity(text)
			lo, hi := f.bounds(ctx)
			if !ok || n < lo || n > hi {
				return f.again(ctx, env, f, s, env.T("stars.bad_qty", "min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi))))
			}
			s.Set("qty", strconv.Itoa(n))
			return f.quote(ctx, env, f, s)
		}
	}
	if ev.Kind != EvButton {
		return f.again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	switch ev.Button.Action {
	case actBack:
		return f.back(ctx, env, f, s)
	}
	return f.show(ctx, env, f, s)
}

// bounds is the quantity range: the upstream's, within 50..10000.
func (f *Stars) bounds(ctx context.Context) (int, int) {
	lo, hi := MinStars, MaxStars
	if p, _, err := f.Catalog.StarsPricing(ctx); err == nil {
		if p.Min > lo {
			lo = p.Min
		}
		if p.Max > 0 && p.Max < hi {
			hi = p.Max
		}
	}
	return lo, hi
}

func (f *Stars) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	p, stale, err := f.Catalog.StarsPricing(ctx)
	if err != nil {
		return nil, false, err
	}
	n, _ := strconv.Atoi(s.Get("qty"))
	return &Quote{
		Line: "stars", Item: "stars", ItemName: locales.N(env.Lang, "count.stars", int64(n)),
		Fields: map[string]string{"username": s.Get("user")}, For: "@" + s.Get("user"), Quantity: n,
		UpstreamUSD: p.PricePerStar.Mul(decimalInt(n)),
	}, stale, nil
}

// Show renders the current step.
func (f *Stars) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case msQty:
		p, stale, err := f.Catalog.StarsPricing(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		lo, hi := f.bounds(ctx)
		text := env.T("stars.qty", "username", locales.Escape(s.Get("user")),
			"min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)),
			"price", f.Pricing.Price(env.Lang, "stars", p.PricePerStar.Mul(decimalInt(100))))
		rows := append(quickQuantities(env, lo, hi, []int{50, 100, 250, 500, 1000, 2500, 5000, 10000}), navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	default:
		s.Step = msUser
		return userScreen(env, "stars.user"), nil
	}
}

// Premium is the Telegram Premium line: recipient, then 3, 6 or 12 months.
type Premium struct{ *Shop }

// Start asks for the recipient.
func (f *Premium) Start(ctx context.Context, env *Env, s *Session, _ string) (*Reply, error) {
	s.Step = msUser
	return f.show(ctx, env, f, s)
}

// Handle takes the recipient and the plan.
func (f *Premium) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, msPlan); ok {
		return r, err
	}
	if s.Step == msUser {
		if reason, ok := askUser(env, s, ev); ok {
			if reason != "" {
				return f.again(ctx, env, f, s, reason)
			}
			s.Goto(msPlan)
			return f.show(ctx, env, f, s)
		}
	}
	if ev.Kind != EvButton {
		return f.again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	switch ev.Button.Action {
	case actBack:
		return f.back(ctx, env, f, s)
	case actQty:
		if s.Step == msPlan {
			if _, err := f.plan(ctx, ev.Button.Arg); err == nil {
				s.Set("months", ev.Button.Arg)
				return f.quote(ctx, env, f, s)
			}
		}
	}
	return f.show(ctx, env, f, s)
}

func (f *Premium) plan(ctx context.Context, months string) (*PremiumPlan, error) {
	plans, _, err := f.Catalog.PremiumPlans(ctx)
	if err != nil {
		return nil, err
	}
	for i := range plans {
		if strconv.Itoa(plans[i].Months) == months {
			return &plans[i], nil
		}
	}
	return nil, notFound("no such plan")
}

func (f *Premium) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	plans, stale, err := f.Catalog.PremiumPlans(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, pl := range plans {
		if strconv.Itoa(pl.Months) == s.Get("months") {
			return &Quote{
				Line: "premium", Item: s.Get("months"), ItemName: env.T("premium.item", "months", env.N("count.months", int64(pl.Months))),
				Fields: map[string]string{"username": s.Get("user")}, For: "@" + s.Get("user"), Quantity: 1, UpstreamUSD: pl.PriceUSD,
			}, stale, nil
		}
	}
	return nil, false, notFound("no such plan")
}

// Show renders the current step.
func (f *Premium) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case msPlan:
		plans, stale, err := f.Catalog.PremiumPlans(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		sc := &Screen{Text: withStale(env, env.T("premium.plan", "username", locales.Escape(s.Get("user"))), stale)}
		funds := f.funds(ctx)
		for _, pl := range plans {
			label := env.T("premium.plan_btn", "months", env.N("count.months", int64(pl.Months)), "price", f.Pricing.Price(env.Lang, "premium", pl.PriceUSD))
			if !funds.covers(pl.PriceUSD) {
				sc.Rows = append(sc.Rows, []Button{{Text: pausedLabel(env, label), Action: actPaused}})
				continue
			}
			sc.Rows = append(sc.Rows, []Button{{Text: label, Action: actQty, Arg: strconv.Itoa(pl.Months)}})
		}
		sc.Rows = append(sc.Rows, navRow(env))
		return sc, nil
	default:
		s.Step = msUser
		return userScreen(env, "premium.user"), nil
	}
}
