// Package settings is the buyer's /settings: the messages the shop may
// start with them. Marketing messages (the admins' broadcasts) can be
// turned off, and are never sent to a buyer after that (bot/admin's
// broadcaster skips them and counts them apart); reminders of an unpaid
// quote (bot/remind), when the shop sends them, can be turned off too,
// the same switch as the reminder's own button. Replies to the buyer's
// own actions (deliveries, refunds, support answers, a back-in-stock
// notice they asked for) are not marketing and always go.
package settings

import (
	"context"

	"shopbot/flows"
	"shopbot/state/redisstore/records"
)

// Deps are the stores the settings live in.
type Deps struct {
	Users *records.Users
	// Reminders is the quote reminders' store, nil when the shop sends no
	// reminders (then /settings does not offer the switch).
	Reminders *records.Reminders
}

// Settings is the feature.
type Settings struct{ d Deps }

// New returns the feature.
func New(d Deps) *Settings { return &Settings{d: d} }

// actToggle flips one setting (arg: argMarketing or argReminders) and
// shows the screen again; a global button, valid in any state.
const actToggle flows.Action = "stg"

const (
	argMarketing = "mkt"
	argReminders = "rem"
)

// Register adds /settings and its buttons.
func (s *Settings) Register(e *flows.Engine) {
	e.HandleCommand("settings", s.command)
	e.HandleButton(actToggle, s.toggle)
}

func (s *Settings) command(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	sc, err := s.screen(ctx, env)
	if err != nil {
		return nil, err
	}
	sc.Fresh = true
	return &flows.Reply{Screen: sc}, nil
}

func (s *Settings) toggle(ctx context.Context, env *flows.Env, _ *flows.Session, ev flows.Event) (*flows.Reply, error) {
	id := env.User.ID
	switch ev.Button.Arg {
	case argMarketing:
		off, err := s.d.Users.MarketingOff(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := s.d.Users.SetMarketingOff(ctx, id, !off, env.Now); err != nil {
			return nil, err
		}
	case argReminders:
		if s.d.Reminders == nil {
			break
		}
		off, err := s.d.Reminders.Off(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := s.d.Reminders.SetOff(ctx, id, !off); err != nil {
			return nil, err
		}
	}
	sc, err := s.screen(ctx, env)
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Answer: env.T("settings.saved"), Screen: sc}, nil
}

// screen shows each switch with its state and a button that flips it.
func (s *Settings) screen(ctx context.Context, env *flows.Env) (*flows.Screen, error) {
	id := env.User.ID
	mktOff, err := s.d.Users.MarketingOff(ctx, id)
	if err != nil {
		return nil, err
	}
	state := func(off bool) string {
		if off {
			return env.T("settings.off")
		}
		return env.T("settings.on")
	}
	text := env.T("settings.title") + "\n\n" + env.T("settings.marketing", "state", state(mktOff))
	rows := [][]flows.Button{{s.button(env, argMarketing, mktOff, "settings.btn_marketing")}}
	if s.d.Reminders != nil {
		remOff, err := s.d.Reminders.Off(ctx, id)
		if err != nil {
			return nil, err
		}
		text += "\n" + env.T("settings.reminders", "state", state(remOff))
		rows = append(rows, []flows.Button{s.button(env, argReminders, remOff, "settings.btn_reminders")})
	}
	text += "\n\n" + env.T("settings.note")
	rows = append(rows, []flows.Button{{Text: env.T("btn.menu"), Action: flows.ActMenu, Global: true}})
	return &flows.Screen{Text: text, Rows: rows}, nil
}

// button flips setting arg: "turn on" when it is off, else "turn off".
func (s *Settings) button(env *flows.Env, arg string, off bool, key string) flows.Button {
	if off {
		key += "_on"
	} else {
		key += "_off"
	}
	return flows.Button{Text: env.T(key), Action: actToggle, Arg: arg, Global: true}
}
