package lines

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"shopbot/flows"
	"shopbot/flows/shop"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/locales"
)

// Topup is the store wallet top-up line: the store login (checked
// with the upstream before anything is priced), the currency, the amount.
type Topup struct{ *shop.Shop }

// Store top-up steps.
const (
	stLogin    = "login"
	stCurrency = "currency"
	stAmount   = "amount"
)

// Store top-up session variables.
const (
	keyLogin    flows.Key = "login"  // the store login, checked
	keyCurrency flows.Key = "cur"    // the currency chosen (its code)
	keyAmount   flows.Key = "amount" // the amount in that currency (2 places)
)

// loginRe is a plausible store login: no spaces, 2 to 64 characters.
var loginRe = regexp.MustCompile(`^[^\s]{2,64}$`)

// amountRe is a positive decimal with at most 2 places ("10", "10.5", "10,50").
var amountRe = regexp.MustCompile(`^[0-9]{1,9}([.,][0-9]{1,2})?$`)

// quickAmounts are the amount buttons per currency.
var quickAmounts = map[string][]int64{
	flows.USD: {5, 10, 20, 50}, "RUB": {500, 1000, 2000, 5000},
	"UAH": {200, 500, 1000, 2000}, "KZT": {2500, 5000, 10000, 25000},
}

// Start asks for the store login.
func (f *Topup) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = stLogin
	return f.ShowStep(ctx, env, f, s)
}

// Handle takes the login, the currency and the amount.
func (f *Topup) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := f.Confirm(ctx, env, f, s, ev, stAmount); ok {
		return r, err
	}
	if ev.Kind != flows.EvButton {
		switch s.Step {
		case stLogin:
			return f.setLogin(ctx, env, s, strings.TrimSpace(ev.Text))
		case stAmount:
			return f.setAmount(ctx, env, s, strings.TrimSpace(ev.Text))
		}
		return f.Again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	b := ev.Button
	switch b.Action {
	case shop.ActBack:
		return f.Back(ctx, env, f, s)
	case shop.ActPick:
		if s.Step == stCurrency {
			rates, _, err := f.Catalog.StoreRates(ctx)
			if err != nil {
				return &flows.Reply{Screen: shop.FailScreen(env, err), Save: true}, nil
			}
			if _, ok := rates.Rates[b.Arg]; ok || b.Arg == flows.USD {
				s.Set(keyCurrency, b.Arg)
				s.Goto(stAmount)
			}
		}
	case shop.ActQty:
		if s.Step == stAmount {
			return f.setAmount(ctx, env, s, b.Arg)
		}
	}
	return f.ShowStep(ctx, env, f, s)
}

// setLogin checks the login with the upstream (rate limited) and refuses
// one that cannot be refilled.
func (f *Topup) setLogin(ctx context.Context, env *flows.Env, s *flows.Session, login string) (*flows.Reply, error) {
	if reason := loginReason(env, login); reason != "" {
		return f.Again(ctx, env, f, s, reason)
	}
	if r, err := f.Limited(ctx, env); r != nil || err != nil {
		return r, err
	}
	if reason := f.refillReason(ctx, env, login); reason != "" {
		return f.Again(ctx, env, f, s, reason)
	}
	s.Set(keyLogin, login)
	s.Goto(stCurrency)
	return f.ShowStep(ctx, env, f, s)
}

// loginReason says why login is not a store login, or "".
func loginReason(env *flows.Env, login string) string {
	switch {
	case hasInvisible(login):
		return env.T("fields.invisible")
	case !loginRe.MatchString(login):
		return env.T("topup.bad_login")
	}
	return ""
}

// refillReason asks the upstream whether login can be topped up and says
// why not, or "" (the caller counts the buyer's rate limit first).
func (f *Topup) refillReason(ctx context.Context, env *flows.Env, login string) string {
	canRefill, err := f.Catalog.CheckStoreLogin(ctx, login)
	switch {
	case err != nil && (errors.Is(err, flows.ErrInvalid) || errors.Is(err, flows.ErrNotFound)):
		return env.T("topup.cannot_refill", "login", locales.Escape(login))
	case err != nil:
		return env.T("topup.check_failed")
	case !canRefill:
		return env.T("topup.cannot_refill", "login", locales.Escape(login))
	}
	return ""
}

// parseAmount reads an amount as the buyer types it ("10", "10.5",
// "10,50", "1 000"), or false.
func parseAmount(text string) (decimal.Decimal, bool) {
	text = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(text), " ", ""), "\u00a0", "")
	if !amountRe.MatchString(text) {
		return decimal.Decimal{}, false
	}
	return decimal.RequireFromString(strings.Replace(text, ",", ".", 1)), true
}

// amountReason says why amount (in cur, of rates) cannot be topped up:
// under the minimum. "" when it can.
func (f *Topup) amountReason(env *flows.Env, rates *flows.StoreRates, cur string, amount decimal.Decimal) string {
	lo, err := f.minimum(rates, cur)
	if err != nil {
		return env.T("catalog.not_found")
	}
	if amount.LessThan(lo) {
		return env.T("topup.below_min", "min", locales.Decimal(env.Lang, lo, 2)+"\u00a0"+cur)
	}
	return ""
}

// minimum is the smallest amount in the chosen currency.
func (f *Topup) minimum(rates *flows.StoreRates, cur string) (decimal.Decimal, error) {
	lo, ok := rates.Min[cur]
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("no minimum top-up in %q", cur)
	}
	return lo, nil
}

func (f *Topup) setAmount(ctx context.Context, env *flows.Env, s *flows.Session, text string) (*flows.Reply, error) {
	rates, _, err := f.Catalog.StoreRates(ctx)
	if err != nil {
		return &flows.Reply{Screen: shop.FailScreen(env, err), Save: true}, nil
	}
	cur := s.Get(keyCurrency)
	if _, err := f.minimum(rates, cur); err != nil {
		return f.Again(ctx, env, f, s, env.T("catalog.not_found"))
	}
	amount, ok := parseAmount(text)
	if !ok {
		return f.Again(ctx, env, f, s, env.T("topup.bad_amount"))
	}
	if reason := f.amountReason(env, rates, cur, amount); reason != "" {
		return f.Again(ctx, env, f, s, reason)
	}
	s.Set(keyAmount, amount.StringFixed(2))
	return f.Quote(ctx, env, f, s)
}

func (f *Topup) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	rates, stale, err := f.Catalog.StoreRates(ctx)
	if err != nil {
		return nil, false, err
	}
	cur := s.Get(keyCurrency)
	rate := decimal.NewFromInt(1)
	if cur != flows.USD {
		r, ok := rates.Rates[cur]
		if !ok || !r.IsPositive() {
			return nil, false, flows.NotFound("currency gone")
		}
		rate = r
	}
	amount, ok := s.Decimal(keyAmount)
	if !ok {
		return nil, false, fmt.Errorf("top-up amount %q is not a number", s.Get(keyAmount))
	}
	if lo, err := f.minimum(rates, cur); err != nil || amount.LessThan(lo) {
		s.Step = stAmount
		return nil, false, &shop.BadInput{Text: env.T("topup.bad_amount")}
	}
	shown := locales.Decimal(env.Lang, amount, 2) + "\u00a0" + cur
	return &flows.Quote{
		Line: "topup", Item: cur, ItemName: env.T("topup.item", "amount", shown),
		Fields:   map[string]string{"store_login": s.Get(keyLogin), "currency": cur, "amount": s.Get(keyAmount)},
		For:      s.Get(keyLogin),
		Quantity: 1, UpstreamUSD: amount.DivRound(rate, 4),
	}, stale, nil
}

// Show renders the current step.
func (f *Topup) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case shop.StepPromo:
		return shop.PromoScreen(env), nil
	case shop.StepConfirm:
		return f.ShowConfirm(ctx, env, s)
	case stCurrency:
		rates, stale, err := f.Catalog.StoreRates(ctx)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		curs := []string{flows.USD}
		for c := range rates.Rates {
			if c != flows.USD {
				curs = append(curs, c)
			}
		}
		slices.Sort(curs[1:])
		var row []flows.Button
		for _, c := range curs {
			row = append(row, flows.Button{Text: c, Action: shop.ActPick, Arg: c})
		}
		text := env.T("topup.currency", "login", locales.Escape(s.Get(keyLogin)))
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: [][]flows.Button{row, shop.NavRow(env)}}, nil
	case stAmount:
		rates, stale, err := f.Catalog.StoreRates(ctx)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		cur := s.Get(keyCurrency)
		lo, err := f.minimum(rates, cur)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		var row []flows.Button
		for _, n := range quickAmounts[cur] {
			if decimal.NewFromInt(n).GreaterThanOrEqual(lo) {
				row = append(row, flows.Button{Text: locales.Number(env.Lang, n) + " " + cur, Action: shop.ActQty, Arg: decimal.NewFromInt(n).String()})
			}
		}
		text := env.T("topup.amount", "login", locales.Escape(s.Get(keyLogin)), "currency", cur,
			"min", locales.Decimal(env.Lang, lo, 2)+"\u00a0"+cur)
		rows := [][]flows.Button{}
		if len(row) > 0 {
			rows = append(rows, row)
		}
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: append(rows, shop.NavRow(env))}, nil
	default:
		s.Step = stLogin
		return &flows.Screen{Text: env.T("topup.login"), Rows: [][]flows.Button{shop.NavRow(env)}}, nil
	}
}
