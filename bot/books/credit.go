package books

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// /credit <user_id> <usd>: a wallet credit by an admin, confirmed, once,
// with its audit; the buyer is told.

// flowCredit is the flow of /credit's confirmation.
const flowCredit = "rep_credit"

// MaxAdminCreditUSD is the largest single /credit; a larger amount is
// refused as a likely typo.
var MaxAdminCreditUSD = decimal.NewFromInt(10_000)

// Button action of the credit confirmation (Cancel is the engine's
// flows.ActCancel).
const actCreditConfirm flows.Action = "ok"

// Session variables of /credit.
const (
	creditKeyUser   flows.Key = "user"   // the buyer credited (a number)
	creditKeyAmount flows.Key = "amount" // the amount in USD (2 places)
	// creditKeyRef is the ledger ref drawn when the confirmation is
	// shown: a replay of the same confirmation credits nothing more.
	creditKeyRef flows.Key = "ref"
	// After Confirm (step "done"): the balance after the credit (2
	// places), whether the buyer was told (rep.credit.told_<told>), and
	// whether the ref was credited before ("true").
	creditKeyBalance flows.Key = "balance"
	creditKeyTold    flows.Key = "told"
	creditKeyDup     flows.Key = "dup"
)

var creditAmountRE = regexp.MustCompile(`^[0-9]+([.,][0-9]{1,2})?$`)

// parseCredit reads "/credit <user_id> <usd>": a positive integer id and a
// positive amount with at most two decimals, up to MaxAdminCreditUSD (a
// decimal comma and a leading "$" are accepted). It returns the locale key
// of the problem, or "".
func parseCredit(arg string) (user int64, amount decimal.Decimal, problem, value string) {
	f := strings.Fields(arg)
	if len(f) != 2 {
		return 0, decimal.Zero, "rep.credit.usage", ""
	}
	user, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || user <= 0 {
		return 0, decimal.Zero, "rep.credit.bad_user", f[0]
	}
	a := strings.TrimPrefix(f[1], "$")
	if !creditAmountRE.MatchString(a) {
		return 0, decimal.Zero, "rep.credit.bad_amount", f[1]
	}
	amount, err = decimal.NewFromString(strings.Replace(a, ",", ".", 1))
	if err != nil || !amount.IsPositive() || amount.GreaterThan(MaxAdminCreditUSD) {
		return 0, decimal.Zero, "rep.credit.bad_amount", f[1]
	}
	return user, amount, "", ""
}

// CreditRef draws the wallet ledger ref of one confirmation screen (of
// /credit, or of the console's credit form): the credit is idempotent by
// it, so Confirm pressed twice, or replayed after a crash, credits once.
func CreditRef(admin int64) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "credit:" + strconv.FormatInt(admin, 10) + ":" + hex.EncodeToString(b[:])
}

func (r *Books) creditCommand(e *flows.Engine) flows.CommandFunc {
	return func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		user, amount, problem, value := parseCredit(ev.Arg)
		if problem != "" {
			maxUSD := locales.Money(env.Lang, MaxAdminCreditUSD)
			text := env.T(problem, "value", locales.Escape(locales.Clip(value, 40)), "max", maxUSD)
			if problem != "rep.credit.usage" {
				text += "\n\n" + env.T("rep.credit.usage", "max", maxUSD)
			}
			return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}, nil
		}
		s.Enter(flowCredit, "confirm", ev.Now.Add(e.FlowTTL))
		s.SetInt(creditKeyUser, user)
		s.Set(creditKeyAmount, amount.StringFixed(2))
		s.Set(creditKeyRef, CreditRef(env.User.ID))
		sc, err := creditFlow{r}.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	}
}

// walletEnabled reports whether buyers can pay with the wallet
// (PAYMENT_METHODS includes wallet).
func (r *Books) walletEnabled() bool { return r.opts.Wallet }

// creditFlow is the confirmation of /credit and its result (the credit
// keys above).
type creditFlow struct{ r *Books }

func (f creditFlow) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// Cancel drops the credit: the confirmation says nothing was credited and
// the admin stays on it (no buyer's menu).
func (f creditFlow) Cancel(_ context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	if s.Step == "done" {
		s.Clear()
		return &flows.Reply{Answer: env.T("cancel.nothing_short"), Notices: []flows.Notice{{Text: env.T("rep.credit.nothing_to_cancel")}}, NoScreen: true, Save: true}, nil
	}
	user := s.Get(creditKeyUser)
	amount, _ := s.Decimal(creditKeyAmount)
	s.Clear()
	text := env.T("rep.credit.cancelled", "user", locales.Escape(user), "amount", locales.Money(env.Lang, amount))
	return &flows.Reply{Answer: env.T("rep.credit.cancelled_short"), Screen: &flows.Screen{Text: text}, Save: true}, nil
}

func (f creditFlow) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if s.Step == "confirm" && ev.Kind == flows.EvButton && ev.Button.Action == actCreditConfirm {
		return f.confirm(ctx, env, s)
	}
	if s.Step == "done" && ev.Kind != flows.EvButton {
		// The credit is over: what the admin types next is not an answer
		// to it (showing "Credited" again reads as a second credit).
		s.Clear()
		return &flows.Reply{Screen: f.r.engine.MenuScreen(env), Save: true}, nil
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// confirm credits the wallet under the screen's ref, records the audit
// entry, logs it and tells the buyer. Every step is safe to repeat: a
// replay of the same confirmation (the session save lost in a crash)
// credits nothing more and tells the buyer nothing more.
func (f creditFlow) confirm(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	r := f.r
	user := s.Int64(creditKeyUser)
	amount, ok := s.Decimal(creditKeyAmount)
	ref := s.Get(creditKeyRef)
	if !ok || user <= 0 || ref == "" {
		s.Clear()
		return &flows.Reply{Answer: env.T("err.outdated"), Screen: r.engine.MenuScreen(env), Save: true}, nil
	}
	bal, dup, told, err := r.Credit(ctx, state.Actor{ID: env.User.ID, Role: env.User.RoleName(), Via: state.ViaChat}, user, amount, ref)
	if err != nil {
		return nil, err // the session keeps the ref: Confirm again finishes it without a second credit
	}
	s.Goto("done")
	s.Set(creditKeyBalance, bal.StringFixed(2))
	s.Set(creditKeyTold, told)
	s.Set(creditKeyDup, strconv.FormatBool(dup))
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Answer: env.T("rep.credit.done_answer"), Screen: sc, Save: true}, err
}

// Credit credits the buyer's wallet with amount under ref (drawn once per
// confirmation: CreditRef), records it in the credit audit and the audit
// log, logs it and tells the buyer: /credit's confirmation and the
// console's credit. Every step is safe to repeat: a replay of the same ref
// credits nothing more and tells the buyer nothing more (told "again").
func (r *Books) Credit(ctx context.Context, by state.Actor, user int64, amount decimal.Decimal, ref string) (bal decimal.Decimal, dup bool, told string, err error) {
	if user <= 0 || !amount.IsPositive() || amount.GreaterThan(MaxAdminCreditUSD) || ref == "" {
		return decimal.Zero, false, "", errors.New("credit: bad user, amount or ref")
	}
	bal, dup, err = r.wallets.Credit(ctx, user, amount, ref, "admin credit", "admin:"+strconv.FormatInt(by.ID, 10))
	if err != nil {
		return decimal.Zero, false, "", err
	}
	fresh, err := r.audit.Record(ctx, state.CreditRecord{Admin: by.ID, User: user, Amount: amount, Ref: ref, At: r.now()})
	if err != nil {
		return decimal.Zero, false, "", err
	}
	told = "again"
	if fresh {
		r.log.Info("admin credited a wallet", "admin", by.ID, "via", by.Via, "user", user, "ref", ref, "replay", dup)
		if r.auditLog != nil {
			e := state.AuditEntry{At: r.now(), Actor: by, Action: state.AuditCredit, Target: state.AuditBuyer(user), Detail: amount.StringFixed(2) + " USD"}
			if err := r.auditLog.Record(ctx, e); err != nil {
				r.log.Warn("audit a wallet credit", "user", user, "err", err)
			}
		}
		told = r.tellBuyer(ctx, user, amount, bal)
	}
	return bal, dup, told, nil
}

// tellBuyer tells the buyer about the credit in their language, if they
// started the bot. It reports what happened: "yes", "not_started",
// "blocked" or "failed"; none of them fails the credit.
func (r *Books) tellBuyer(ctx context.Context, user int64, amount, bal decimal.Decimal) string {
	started, err := r.users.HasStarted(ctx, user)
	if err != nil || !started {
		return "not_started"
	}
	if blocked, _ := r.users.Blocked(ctx, user); blocked {
		return "blocked"
	}
	lang := r.buyerLang(ctx, user)
	text := locales.T(lang, "rep.credit.buyer", "amount", locales.Money(lang, amount), "balance", locales.Money(lang, bal))
	if r.walletEnabled() {
		text += "\n" + locales.T(lang, "rep.credit.buyer_hint")
	}
	_, err = r.tg.Send(ctx, user, text, nil)
	switch {
	case errors.Is(err, flows.ErrBlocked):
		return "blocked"
	case err != nil:
		r.log.Warn("tell buyer about a wallet credit", "user", user, "err", err)
		return "failed"
	}
	return "yes"
}

// buyerLang is the buyer's language: the one chosen with /language, else
// the one of their latest order, else the shop's default.
func (r *Books) buyerLang(ctx context.Context, user int64) locales.Lang {
	e := r.engine
	if _, doc, err := r.sessions.Conversation(ctx, user); err == nil && doc != nil {
		s, _ := flows.DecodeSession(doc)
		if l, ok := locales.Parse(s.Lang); ok && slices.Contains(e.Langs, l) {
			return l
		}
	}
	if list, err := r.orders.ListByUser(ctx, user, 0, 1); err == nil && len(list) > 0 {
		if l, ok := locales.Parse(list[0].Lang); ok && slices.Contains(e.Langs, l) {
			return l
		}
	}
	return e.DefaultLang
}

func (f creditFlow) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	r := f.r
	user := s.Int64(creditKeyUser)
	amount, _ := s.Decimal(creditKeyAmount)
	id := strconv.FormatInt(user, 10)
	if s.Step == "done" {
		bal, _ := s.Decimal(creditKeyBalance)
		key := "rep.credit.done"
		if s.Get(creditKeyDup) == "true" {
			key = "rep.credit.done_before"
		}
		text := env.T(key, "amount", locales.Money(env.Lang, amount), "user", id, "balance", locales.Money(env.Lang, bal))
		text += "\n" + env.T("rep.credit.told_"+s.Get(creditKeyTold))
		return &flows.Screen{Text: text}, nil
	}
	bal, err := r.wallets.Balance(ctx, user)
	if err != nil {
		return nil, err
	}
	started, err := r.users.HasStarted(ctx, user)
	if err != nil {
		return nil, err
	}
	blocked, err := r.users.Blocked(ctx, user)
	if err != nil {
		return nil, err
	}
	text := env.T("rep.credit.confirm", "user", id, "amount", locales.Money(env.Lang, amount),
		"balance", locales.Money(env.Lang, bal), "after", locales.Money(env.Lang, bal.Add(amount)))
	switch {
	case !started:
		text += "\n\n" + env.T("rep.credit.not_started")
	case blocked:
		text += "\n\n" + env.T("rep.credit.blocked")
	}
	if !r.walletEnabled() {
		text += "\n\n" + env.T("rep.credit.wallet_off")
	}
	text += "\n\n" + env.T("rep.credit.question")
	return &flows.Screen{Text: text, Rows: [][]flows.Button{{
		{Text: env.T("rep.btn.confirm"), Action: actCreditConfirm}, {Text: env.T("btn.cancel"), Action: flows.ActCancel},
	}}}, nil
}
