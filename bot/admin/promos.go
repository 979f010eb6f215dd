package admin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// /promo: admins add, list, disable and bulk-generate promo codes.
//
//	/promo add CODE 10%|$5 [lines=keys,giftcards] [min=5] [uses=100] [once] [until=2026-12-31] [belowcost]
//	/promo gen N 10%|$5 [prefix=XMAS] [lines=...] [min=...] [once] [until=...] [belowcost]
//	/promo list
//	/promo disable CODE

// Limits of /promo.
const (
	MaxPromoBatch = 1000 // codes one /promo gen makes
	promoListMax  = 30   // codes /promo list shows
	promoCodeLen  = 8    // random characters of a generated code
)

var (
	promoPercentRE = regexp.MustCompile(`^([0-9]{1,3}([.,][0-9]{1,2})?)%$`)
	promoFixedRE   = regexp.MustCompile(`^\$([0-9]{1,6}([.,][0-9]{1,2})?)$`)
	promoUSDRE     = regexp.MustCompile(`^\$?([0-9]{1,6}([.,][0-9]{1,2})?)$`)
	promoPrefixRE  = regexp.MustCompile(`^[A-Z0-9]{1,12}$`)
	promoDateRE    = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// promoSpec is a parsed /promo add or /promo gen.
type promoSpec struct {
	promo  state.Promo
	count  int    // gen
	prefix string // gen
}

// promoProblem is why /promo's arguments cannot be used: a locale key of
// rep.promo.* and the offending value.
type promoProblem struct{ key, value string }

func (p *promoProblem) Error() string { return p.key + " " + p.value }

func usd(s string) decimal.Decimal {
	return decimal.RequireFromString(strings.Replace(s, ",", ".", 1))
}

// parsePromoSpec reads the arguments after "add" (gen false: CODE first)
// or "gen" (gen true: N first), strictly: every word must be understood.
func parsePromoSpec(words []string, gen bool, now time.Time) (*promoSpec, *promoProblem) {
	if len(words) < 2 {
		return nil, &promoProblem{"rep.promo.usage", ""}
	}
	sp := &promoSpec{}
	if gen {
		n, err := strconv.Atoi(words[0])
		if err != nil || n < 1 || n > MaxPromoBatch {
			return nil, &promoProblem{"rep.promo.bad_count", words[0]}
		}
		sp.count, sp.promo.MaxUses = n, 1
	} else {
		code, ok := state.NormalizePromoCode(words[0])
		if !ok {
			return nil, &promoProblem{"rep.promo.bad_code", words[0]}
		}
		sp.promo.Code = code
	}
	d := words[1]
	if m := promoPercentRE.FindStringSubmatch(d); m != nil {
		pct := usd(m[1])
		if !pct.IsPositive() || pct.GreaterThan(decimal.NewFromInt(100)) {
			return nil, &promoProblem{"rep.promo.bad_discount", d}
		}
		sp.promo.Percent = pct
	} else if m := promoFixedRE.FindStringSubmatch(d); m != nil {
		off := usd(m[1])
		if !off.IsPositive() {
			return nil, &promoProblem{"rep.promo.bad_discount", d}
		}
		sp.promo.OffUSD = off
	} else {
		return nil, &promoProblem{"rep.promo.bad_discount", d}
	}
	seen := map[string]bool{}
	for _, w := range words[2:] {
		key, val, hasVal := strings.Cut(w, "=")
		key = strings.ToLower(key)
		if seen[key] {
			return nil, &promoProblem{"rep.promo.twice", w}
		}
		seen[key] = true
		bad := &promoProblem{"rep.promo.bad_value", w}
		switch {
		case key == "once" && !hasVal:
			sp.promo.PerBuyer = true
		case key == "belowcost" && !hasVal:
			sp.promo.BelowCost = true
		case key == "lines" && hasVal:
			for _, l := range strings.Split(strings.ToLower(val), ",") {
				if !slices.ContainsFunc(flows.Lines, func(x flows.Line) bool { return x.Name == l }) || slices.Contains(sp.promo.Lines, l) {
					return nil, bad
				}
				sp.promo.Lines = append(sp.promo.Lines, l)
			}
		case key == "min" && hasVal:
			m := promoUSDRE.FindStringSubmatch(val)
			if m == nil {
				return nil, bad
			}
			sp.promo.MinUSD = usd(m[1])
		case key == "uses" && hasVal && !gen:
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1_000_000 {
				return nil, bad
			}
			sp.promo.MaxUses = n
		case key == "until" && hasVal:
			day, err := time.Parse("2006-01-02", val)
			if !promoDateRE.MatchString(val) || err != nil {
				return nil, bad
			}
			end := day.AddDate(0, 0, 1) // valid through that day, UTC
			if !end.After(now) {
				return nil, &promoProblem{"rep.promo.past", val}
			}
			sp.promo.Expires = end
		case key == "prefix" && hasVal && gen:
			p := strings.ToUpper(val)
			if !promoPrefixRE.MatchString(p) {
				return nil, bad
			}
			sp.prefix = p
		default:
			return nil, &promoProblem{"rep.promo.bad_option", w}
		}
	}
	return sp, nil
}

// registerPromos adds /promo, for those who may manage promo codes, when
// the shop has a promo store.
func (ad *Admin) registerPromos(e *flows.Engine) {
	if ad.promos == nil {
		return
	}
	e.AdminCommand("promo", flows.PermPromo, "cmd.promo", ad.promoCommand)
}

func promoNotice(text string) *flows.Reply {
	return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}
}

func (ad *Admin) promoCommand(ctx context.Context, env *flows.Env, _ *flows.Session, ev flows.Event) (*flows.Reply, error) {
	words := strings.Fields(ev.Arg)
	usage := env.T("rep.promo.usage", "max", MaxPromoBatch)
	problem := func(p *promoProblem) *flows.Reply {
		if p.key == "rep.promo.usage" {
			return promoNotice(usage)
		}
		return promoNotice(env.T(p.key, "value", locales.Escape(locales.Clip(p.value, 40)), "max", MaxPromoBatch) + "\n\n" + usage)
	}
	if len(words) == 0 {
		return promoNotice(usage), nil
	}
	switch strings.ToLower(words[0]) {
	case "add":
		sp, p := parsePromoSpec(words[1:], false, ev.Now)
		if p != nil {
			return problem(p), nil
		}
		err := ad.promos.Add(ctx, &sp.promo)
		if errors.Is(err, state.ErrPromoExists) {
			return promoNotice(env.T("rep.promo.exists", "code", sp.promo.Code)), nil
		}
		if err != nil {
			return nil, err
		}
		ad.log.Info("promo code added", "code", sp.promo.Code, "admin", env.User.ID)
		ad.audit(ctx, chatActor(env), state.AuditPromoAdd, "promo "+sp.promo.Code, strings.Join(words[1:], " "))
		return promoNotice(env.T("rep.promo.added", "code", sp.promo.Code, "terms", promoTerms(env, &sp.promo))), nil
	case "gen":
		sp, p := parsePromoSpec(words[1:], true, ev.Now)
		if p != nil {
			return problem(p), nil
		}
		return ad.promoGen(ctx, env, sp)
	case "list":
		if len(words) != 1 {
			return problem(&promoProblem{"rep.promo.bad_option", words[1]}), nil
		}
		return ad.promoList(ctx, env, ev.Now)
	case "disable":
		if len(words) != 2 {
			return problem(&promoProblem{"rep.promo.usage", ""}), nil
		}
		did, err := ad.promos.Disable(ctx, words[1])
		if errors.Is(err, state.ErrPromoUnknown) {
			return promoNotice(env.T("rep.promo.unknown", "code", locales.Escape(locales.Clip(words[1], 40)))), nil
		}
		if err != nil {
			return nil, err
		}
		code, _ := state.NormalizePromoCode(words[1])
		if !did {
			return promoNotice(env.T("rep.promo.already_disabled", "code", code)), nil
		}
		ad.log.Info("promo code disabled", "code", code, "admin", env.User.ID)
		ad.audit(ctx, chatActor(env), state.AuditPromoDisable, "promo "+code, "")
		return promoNotice(env.T("rep.promo.disabled", "code", code)), nil
	}
	return problem(&promoProblem{"rep.promo.bad_action", words[0]}), nil
}

// promoGen makes sp.count one-time codes and sends them as a .txt file.
func (ad *Admin) promoGen(ctx context.Context, env *flows.Env, sp *promoSpec) (*flows.Reply, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	batch := hex.EncodeToString(b[:])
	codes := make([]string, 0, sp.count)
	for len(codes) < sp.count {
		p := sp.promo
		p.Code, p.Batch = state.NewPromoCode(sp.prefix, promoCodeLen), batch
		err := ad.promos.Add(ctx, &p)
		if errors.Is(err, state.ErrPromoExists) {
			continue // drawn before: draw again
		}
		if err != nil {
			return nil, err
		}
		codes = append(codes, p.Code)
	}
	ad.log.Info("promo codes generated", "batch", batch, "count", len(codes), "admin", env.User.ID)
	ad.audit(ctx, chatActor(env), state.AuditPromoAdd, "promo batch "+batch, strconv.Itoa(len(codes))+" codes")
	caption := env.N("rep.promo.generated", int64(len(codes)), "terms", promoTerms(env, &sp.promo), "batch", batch)
	data := []byte(strings.Join(codes, "\n") + "\n")
	if err := ad.tg.SendDocument(ctx, env.User.ID, "promo-"+batch+".txt", data, caption); err != nil {
		return nil, err
	}
	return &flows.Reply{NoScreen: true}, nil
}

func (ad *Admin) promoList(ctx context.Context, env *flows.Env, now time.Time) (*flows.Reply, error) {
	list, total, err := ad.promos.List(ctx, promoListMax)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return promoNotice(env.T("rep.promo.list_empty")), nil
	}
	var b strings.Builder
	b.WriteString(env.T("rep.promo.list_title", "n", len(list), "total", total))
	for _, p := range list {
		status := env.T("rep.promo.s_active")
		switch {
		case p.Disabled:
			status = env.T("rep.promo.s_disabled")
		case !p.Expires.IsZero() && !now.Before(p.Expires):
			status = env.T("rep.promo.s_expired")
		case p.MaxUses > 0 && p.Used >= p.MaxUses:
			status = env.T("rep.promo.s_used_up")
		}
		used := env.T("rep.promo.used", "used", p.Used)
		if p.MaxUses > 0 {
			used = env.T("rep.promo.used_of", "used", p.Used, "max", p.MaxUses)
		}
		b.WriteString("\n" + env.T("rep.promo.list_line", "code", p.Code, "terms", promoTerms(env, p), "used", used, "status", status))
	}
	return promoNotice(locales.Clip(b.String(), maxMessageChars)), nil
}

// promoTerms describes what a code gives and when it applies.
func promoTerms(env *flows.Env, p *state.Promo) string {
	var parts []string
	if p.Percent.IsPositive() {
		places := int32(0)
		if !p.Percent.Equal(p.Percent.Truncate(0)) {
			places = 2
		}
		parts = append(parts, env.T("rep.promo.t_percent", "pct", locales.Decimal(env.Lang, p.Percent, places)))
	} else {
		parts = append(parts, env.T("rep.promo.t_off", "usd", locales.Money(env.Lang, p.OffUSD)))
	}
	if len(p.Lines) > 0 {
		names := make([]string, len(p.Lines))
		for i, l := range p.Lines {
			names[i] = env.T("line." + l)
		}
		parts = append(parts, env.T("rep.promo.t_lines", "lines", strings.Join(names, ", ")))
	}
	if p.MinUSD.IsPositive() {
		parts = append(parts, env.T("rep.promo.t_min", "usd", locales.Money(env.Lang, p.MinUSD)))
	}
	if p.MaxUses > 0 {
		parts = append(parts, env.N("rep.promo.t_uses", int64(p.MaxUses)))
	}
	if p.PerBuyer {
		parts = append(parts, env.T("rep.promo.t_once"))
	}
	if !p.Expires.IsZero() {
		parts = append(parts, env.T("rep.promo.t_until", "date", locales.Date(env.Lang, p.Expires.Add(-time.Second))))
	}
	if p.BelowCost {
		parts = append(parts, env.T("rep.promo.t_below"))
	}
	return strings.Join(parts, " · ")
}
