package admin

import (
	"context"
	"strconv"
	"time"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// broadcastFlow is the admin's conversation: compose (a text, or a photo,
// video or document with a caption) -> the summary (with the message
// shown above it as buyers will get it), where the audience, the buttons
// and the time are chosen -> send or schedule.
type broadcastFlow struct{ br *broadcaster }

// The steps of the flow.
const (
	bcStepCompose  = "compose"
	bcStepConfirm  = "confirm"
	bcStepAudience = "audience"
	bcStepLang     = "aud_lang"
	bcStepLine     = "aud_line"
	bcStepDays     = "aud_days"
	bcStepButtons  = "buttons"
	bcStepWhen     = "when"
)

// dayChoices are the numbers of days the audience picker offers.
var dayChoices = []int{7, 30, 90}

func (f broadcastFlow) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = bcStepCompose
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// plan is the broadcast the session holds.
func (f broadcastFlow) plan(s *flows.Session) state.BroadcastPlan {
	p := state.BroadcastPlan{Text: s.Get(bcKeyText), Media: s.Get(bcKeyMedia), FileID: s.Get(bcKeyFile), Buttons: decodeButtons(s.Get(bcKeyButtons))}
	p.Audience, _ = state.ParseAudience(s.Get(bcKeyAudience))
	if at := s.Int64(bcKeyAt); at > 0 {
		p.At = time.Unix(at, 0)
	}
	return p
}

// to moves to step (the summary keeps no way back: each step returns to it).
func to(s *flows.Session, step string) { s.Step, s.Back = step, nil }

func (f broadcastFlow) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	b := ev.Button
	pressed := func(a flows.Action) bool { return ev.Kind == flows.EvButton && b.Action == a }
	switch {
	case s.Step == bcStepCompose:
		return f.compose(ctx, env, s, ev)
	case pressed(bcActBack):
		to(s, bcStepConfirm)
		return f.screen(ctx, env, s, nil)
	case s.Step == bcStepConfirm && pressed(bcActSend):
		return f.send(ctx, env, s, ev)
	case s.Step == bcStepConfirm && pressed(bcActEdit):
		s.Set(bcKeyText, "")
		s.Set(bcKeyMedia, "")
		s.Set(bcKeyFile, "")
		to(s, bcStepCompose)
		return f.screen(ctx, env, s, nil)
	case s.Step == bcStepConfirm && pressed(bcActPreview):
		return f.preview(ctx, env, s)
	case s.Step == bcStepConfirm && pressed(bcActAudience):
		to(s, bcStepAudience)
		return f.screen(ctx, env, s, nil)
	case s.Step == bcStepConfirm && pressed(bcActButtons):
		to(s, bcStepButtons)
		return f.screen(ctx, env, s, nil)
	case s.Step == bcStepConfirm && pressed(bcActWhen):
		to(s, bcStepWhen)
		return f.screen(ctx, env, s, nil)
	case pressed(bcActAudience):
		return f.pickAudience(ctx, env, s, b.Arg)
	case s.Step == bcStepDays && ev.Kind == flows.EvText:
		n, err := strconv.Atoi(ev.Text)
		if err != nil || n < 1 || n > state.MaxAudienceDays {
			return f.screen(ctx, env, s, []flows.Notice{{Text: env.T("bc.aud.bad_days")}})
		}
		return f.pickAudience(ctx, env, s, s.Get(bcKeyDays)+":"+strconv.Itoa(n))
	case s.Step == bcStepButtons && pressed(bcActNoButton):
		s.Set(bcKeyButtons, "")
		to(s, bcStepConfirm)
		return f.screen(ctx, env, s, nil)
	case s.Step == bcStepButtons && ev.Kind == flows.EvText:
		bs, bad := parseButtons(ev.Text, f.br.botName())
		if bad != "" {
			return f.screen(ctx, env, s, []flows.Notice{{Text: env.T("bc.buttons_bad", "line", locales.Escape(locales.Clip(bad, 80)), "max", MaxBroadcastButtons)}})
		}
		s.Set(bcKeyButtons, encodeButtons(bs))
		to(s, bcStepConfirm)
		return f.screen(ctx, env, s, nil)
	case s.Step == bcStepWhen && pressed(bcActNow):
		s.Set(bcKeyAt, "")
		to(s, bcStepConfirm)
		return f.screen(ctx, env, s, nil)
	case s.Step == bcStepWhen && ev.Kind == flows.EvText:
		at, ok := parseWhen(ev.Text, f.br.now())
		if !ok {
			return f.screen(ctx, env, s, []flows.Notice{{Text: env.T("bc.when_bad")}})
		}
		s.SetInt(bcKeyAt, at.Unix())
		to(s, bcStepConfirm)
		return f.screen(ctx, env, s, nil)
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// compose takes the message: a text, or media with its caption. It then
// shows it as buyers will get it, and the summary below.
func (f broadcastFlow) compose(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	var media, file, text string
	switch {
	case ev.Kind == flows.EvPhoto && ev.PhotoID != "":
		media, file, text = state.MediaPhoto, ev.PhotoID, ev.Text
	case ev.Media != nil && ev.Media.FileID != "":
		media, file, text = ev.Media.Kind, ev.Media.FileID, ev.Media.Caption
	case ev.Kind == flows.EvText && ev.Text != "":
		text = ev.Text
	default:
		return f.screen(ctx, env, s, []flows.Notice{{Text: env.T("bc.text_only")}})
	}
	if !fitsText(text, media) {
		return f.screen(ctx, env, s, []flows.Notice{{Text: env.T("bc.too_long", "max", textLimit(media))}})
	}
	s.Set(bcKeyText, locales.Escape(text))
	s.Set(bcKeyMedia, media)
	s.Set(bcKeyFile, file)
	to(s, bcStepConfirm)
	return f.preview(ctx, env, s)
}

// preview sends the admin the message as buyers will get it (its links
// untagged, so the admin's taps are not counted as opens), then the
// summary anew below it.
func (f broadcastFlow) preview(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	p := f.plan(s)
	rows := buttonRows(p.Buttons, "", f.br.botName())
	var err error
	if p.Media == "" {
		_, err = f.br.tg.Send(ctx, env.User.ID, p.Text, rows)
	} else {
		_, err = f.br.tg.SendMedia(ctx, env.User.ID, p.Media, p.FileID, p.Text, rows)
	}
	if err != nil {
		f.br.log.Warn("broadcast preview", "err", err)
	}
	r, err := f.screen(ctx, env, s, nil)
	if r != nil && r.Screen != nil {
		r.Screen.Fresh = true
	}
	return r, err
}

// pickAudience takes the audience picker's choice: a whole audience, or a
// kind that needs a language, a line or a number of days first.
func (f broadcastFlow) pickAudience(ctx context.Context, env *flows.Env, s *flows.Session, arg string) (*flows.Reply, error) {
	switch arg {
	case state.AudienceLang:
		to(s, bcStepLang)
		return f.screen(ctx, env, s, nil)
	case state.AudienceLine:
		to(s, bcStepLine)
		return f.screen(ctx, env, s, nil)
	case state.AudienceRecent, state.AudienceInactive:
		s.Set(bcKeyDays, arg)
		to(s, bcStepDays)
		return f.screen(ctx, env, s, nil)
	}
	a, err := state.ParseAudience(arg)
	if err != nil || !checkAudience(a, f.br.engine.Langs) {
		sc, err := f.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Answer: env.T("err.outdated")}, err
	}
	s.Set(bcKeyAudience, a.String())
	to(s, bcStepConfirm)
	return f.screen(ctx, env, s, nil)
}

// send starts (or schedules) the broadcast composed.
func (f broadcastFlow) send(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	p := f.plan(s)
	now := f.br.now()
	if !p.At.IsZero() && !p.At.After(now) {
		s.Set(bcKeyAt, "") // the time chosen has passed: choose again
		return f.screen(ctx, env, s, []flows.Notice{{Text: env.T("bc.when_passed")}})
	}
	if key := f.br.check(p, now); key != "" {
		return f.screen(ctx, env, s, []flows.Notice{{Text: env.T(key, "max", textLimit(p.Media))}})
	}
	s.Clear()
	id, err := f.br.start(ctx, ev.User.ID, env.Lang, p, env.Now)
	if err != nil {
		return nil, err
	}
	f.br.audit(ctx, chatActor(env), state.AuditBroadcast, "broadcast "+id, auditDetail(p))
	answer := env.T("bc.started")
	if !p.At.IsZero() {
		answer = env.T("bc.scheduled_answer")
	}
	return &flows.Reply{Answer: answer, Save: true, NoScreen: true}, nil
}

// auditDetail is what the audit log says of a broadcast: its audience, its
// time, its media and the start of its text.
func auditDetail(p state.BroadcastPlan) string {
	d := p.Audience.String()
	if !p.At.IsZero() {
		d += " at " + whenText(p.At)
	}
	if p.Media != "" {
		d += " " + p.Media
	}
	return d + ": " + locales.Clip(locales.Plain(p.Text), 80)
}

func (f broadcastFlow) screen(ctx context.Context, env *flows.Env, s *flows.Session, notices []flows.Notice) (*flows.Reply, error) {
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Notices: notices, Save: true}, err
}

func (f broadcastFlow) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	cancel := flows.Button{Text: env.T("btn.cancel"), Action: flows.ActCancel}
	back := []flows.Button{{Text: env.T("btn.back"), Action: bcActBack}}
	pick := func(label, arg string) flows.Button {
		return flows.Button{Text: label, Action: bcActAudience, Arg: arg}
	}
	switch s.Step {
	case bcStepCompose:
		return &flows.Screen{Text: env.T("bc.compose"), Rows: [][]flows.Button{{cancel}}}, nil
	case bcStepAudience:
		var rows [][]flows.Button
		for _, k := range state.AudienceKinds {
			rows = append(rows, []flows.Button{pick(env.T("bc.aud.btn."+k), k)})
		}
		return &flows.Screen{Text: env.T("bc.aud.pick"), Rows: append(rows, back)}, nil
	case bcStepLang:
		var row []flows.Button
		for _, l := range f.br.engine.Langs {
			row = append(row, pick(locales.LanguageName(l), state.Audience{Kind: state.AudienceLang, Lang: string(l)}.String()))
		}
		return &flows.Screen{Text: env.T("bc.aud.pick_lang"), Rows: [][]flows.Button{row, back}}, nil
	case bcStepLine:
		var rows [][]flows.Button
		for i, l := range flows.Lines {
			b := pick(env.T(l.Label), state.Audience{Kind: state.AudienceLine, Line: l.Name}.String())
			if i%2 == 0 {
				rows = append(rows, []flows.Button{b})
			} else {
				rows[len(rows)-1] = append(rows[len(rows)-1], b)
			}
		}
		return &flows.Screen{Text: env.T("bc.aud.pick_line"), Rows: append(rows, back)}, nil
	case bcStepDays:
		kind := s.Get(bcKeyDays)
		var row []flows.Button
		for _, n := range dayChoices {
			row = append(row, pick(env.N("bc.days", int64(n)), state.Audience{Kind: kind, Days: n}.String()))
		}
		return &flows.Screen{Text: env.T("bc.aud.pick_days_" + kind), Rows: [][]flows.Button{row, back}}, nil
	case bcStepButtons:
		name := f.br.botName()
		if name == "" {
			name = "bot"
		}
		return &flows.Screen{Text: env.T("bc.buttons_ask", "bot", locales.Escape(name), "max", MaxBroadcastButtons), Rows: [][]flows.Button{
			{{Text: env.T("btn.bc_no_buttons"), Action: bcActNoButton}}, back}}, nil
	case bcStepWhen:
		return &flows.Screen{Text: env.T("bc.when_ask", "now", whenText(f.br.now())), Rows: [][]flows.Button{
			{{Text: env.T("btn.bc_now"), Action: bcActNow}}, back}}, nil
	}
	return f.summary(ctx, env, s)
}

// summary is the confirm step: what will go, to whom and when, with the
// audience's size now, and the buttons that change each.
func (f broadcastFlow) summary(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	p := f.plan(s)
	c, err := f.br.count(ctx, p.Audience)
	if err != nil {
		return nil, err
	}
	apart := ""
	if c.OptedOut+c.Blocked > 0 {
		apart = "\n" + env.T("bc.apart", "optout", c.OptedOut, "blocked", c.Blocked)
	}
	when := env.T("bc.when_now")
	send := env.N("btn.bc_send", c.Reach())
	if !p.At.IsZero() {
		when = env.T("bc.when_at", "at", whenText(p.At))
		send = env.T("btn.bc_schedule")
	}
	text := env.N("bc.summary", c.Reach(), "media", env.T("bc.media."+mediaKey(p.Media)), "audience", audienceName(env.Lang, p.Audience),
		"apart", apart, "buttons", buttonsSummary(env.Lang, p.Buttons), "when", when)
	return &flows.Screen{Text: text, Rows: [][]flows.Button{
		{{Text: send, Action: bcActSend}},
		{{Text: env.T("btn.bc_audience"), Action: bcActAudience}, {Text: env.T("btn.bc_buttons"), Action: bcActButtons}},
		{{Text: env.T("btn.bc_when"), Action: bcActWhen}, {Text: env.T("btn.bc_preview"), Action: bcActPreview}},
		{{Text: env.T("btn.edit"), Action: bcActEdit}, {Text: env.T("btn.cancel"), Action: flows.ActCancel}},
	}}, nil
}

func mediaKey(media string) string {
	if media == "" {
		return "text"
	}
	return media
}
