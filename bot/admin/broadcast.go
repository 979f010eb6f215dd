package admin

import (
	"context"
	"errors"
	"log/slog"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strconv"
	"time"

	"shopbot/flows"
	"shopbot/locales"
)

// broadcaster runs admin broadcasts as resumable jobs in Redis: any
// process may carry a job on after another stopped.
type broadcaster struct {
	tg    Telegram
	users *records.Users
	log   *slog.Logger
	jobs  *work.Broadcasts
	owner string
	wake  chan struct{}
	every time.Duration // how often the admin's progress message is updated
}

func newBroadcaster(d Deps) *broadcaster {
	return &broadcaster{
		tg: d.Telegram, users: d.Users, log: d.Log, jobs: d.Broadcasts,
		owner: strconv.FormatInt(time.Now().UnixNano(), 36), wake: make(chan struct{}, 1), every: 2 * time.Second,
	}
}

// register adds /broadcast (admins only), its compose flow and the stop
// button to the engine.
func (br *broadcaster) register(e *flows.Engine) {
	e.RegisterAdmin("broadcast", broadcastFlow{br})
	e.HandleCommand("broadcast", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		if !env.User.Admin {
			return flows.UnknownCommand(env), nil
		}
		s.Enter("broadcast", "compose", ev.Now.Add(e.FlowTTL))
		r, err := broadcastFlow{br}.Start(ctx, env, s, "")
		if r != nil {
			r.Save = true
		}
		return r, err
	})
	e.HandleButton("bcx", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		if !env.User.Admin {
			return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
		}
		if _, err := br.jobs.Finish(ctx, ev.Button.Arg, work.BroadcastCancelled); err != nil {
			return nil, err
		}
		return &flows.Reply{Answer: env.T("bc.cancelled"), NoScreen: true}, nil
	})
}

// start creates the job and the admin's progress message.
func (br *broadcaster) start(ctx context.Context, admin int64, lang locales.Lang, text string, now time.Time) error {
	total, err := br.users.CountBuyers(ctx)
	if err != nil {
		return err
	}
	j := &work.BroadcastJob{AdminChat: admin, Text: text, Lang: string(lang), Total: total, CreatedAt: now}
	if _, err := br.jobs.Create(ctx, j); err != nil {
		return err
	}
	msg, err := br.tg.Send(ctx, admin, br.progressText(j), br.stopButton(j))
	if err == nil {
		_ = br.jobs.SetProgressMsg(ctx, j.ID, msg)
	}
	select {
	case br.wake <- struct{}{}:
	default:
	}
	return nil
}

func (br *broadcaster) stopButton(j *work.BroadcastJob) [][]flows.Button {
	lang := locales.Lang(j.Lang)
	d, _ := flows.EncodeCallback(flows.GlobalNonce, "bcx", j.ID)
	return [][]flows.Button{{{Text: locales.T(lang, "btn.bc_stop"), Data: d}}}
}

// progressText is the progress message's text, whatever the job's status.
func (br *broadcaster) progressText(j *work.BroadcastJob) string {
	lang := locales.Lang(j.Lang)
	return locales.T(lang, "bc.progress", "id", j.ID, "done", min(j.Pos, j.Total), "total", j.Total,
		"sent", j.Sent, "blocked", j.Blocked, "failed", j.Failed)
}

// reportText is the final report of a finished job.
func (br *broadcaster) reportText(j *work.BroadcastJob) string {
	lang := locales.Lang(j.Lang)
	key := "bc.progress"
	switch j.Status {
	case work.BroadcastDone:
		key = "bc.report"
	case work.BroadcastCancelled:
		key = "bc.report_cancelled"
	}
	return locales.T(lang, key, "id", j.ID, "done", min(j.Pos, j.Total), "total", j.Total,
		"sent", j.Sent, "blocked", j.Blocked, "failed", j.Failed)
}

// run carries every active job on until ctx ends.
func (br *broadcaster) run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		ids, err := br.jobs.Active(ctx)
		if err != nil && ctx.Err() == nil {
			br.log.Warn("list broadcasts", "err", err)
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return
			}
			br.carry(ctx, id)
		}
		select {
		case <-ctx.Done():
			return
		case <-br.wake:
		case <-t.C:
		}
	}
}

// carry sends one job's messages while this process holds its lock.
func (br *broadcaster) carry(ctx context.Context, id string) {
	const lease = 15 * time.Second
	if ok, err := br.jobs.Lock(ctx, id, br.owner, lease); err != nil || !ok {
		return
	}
	defer func() { _ = br.jobs.Unlock(context.WithoutCancel(ctx), id, br.owner) }()
	j, err := br.jobs.Get(ctx, id)
	if err != nil {
		return
	}
	// The pace is the bot's, not the process's: a process that takes over a
	// job (another one stopped or restarted) lets the last second of the
	// previous holder's messages pass first, so the two never add up above
	// BroadcastRate. The previous holder sent its last message before it
	// released the lock (or its lock expired).
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Second):
	}
	renewed, shown := time.Now(), time.Now()
	for ctx.Err() == nil {
		if time.Since(renewed) > lease/3 {
			if ok, err := br.jobs.Lock(ctx, id, br.owner, lease); err != nil || !ok {
				return
			}
			renewed = time.Now()
		}
		if time.Since(shown) > br.every {
			br.showProgress(ctx, id)
			shown = time.Now()
		}
		pos, err := br.jobs.Take(ctx, id)
		if errors.Is(err, work.ErrBroadcastStopped) {
			br.finish(ctx, id, "")
			return
		}
		if err != nil {
			br.log.Warn("broadcast take", "job", id, "err", err)
			return
		}
		if !br.sendAt(ctx, j, pos) {
			return
		}
	}
}

// sendAt sends the job's message to the buyer at pos, which this process
// has taken. It finishes even if shutdown has begun, so a graceful restart
// loses nobody; it returns false when the job has no buyers left.
func (br *broadcaster) sendAt(ctx context.Context, j *work.BroadcastJob, pos int64) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	buyers, err := br.users.Buyers(ctx, pos, 1)
	if err != nil {
		br.log.Warn("broadcast buyers", "job", j.ID, "err", err)
		_ = br.jobs.Record(ctx, j.ID, "failed")
		return true
	}
	if len(buyers) == 0 {
		br.finish(ctx, j.ID, work.BroadcastDone)
		return false
	}
	br.sendOne(ctx, j.ID, j.Text, buyers[0])
	return true
}

func (br *broadcaster) sendOne(ctx context.Context, id, text string, buyer int64) {
	if blocked, _ := br.users.Blocked(ctx, buyer); blocked {
		_ = br.jobs.Record(ctx, id, "blocked")
		return
	}
	outcome := "sent"
	if _, err := br.tg.SendBulk(ctx, buyer, text); err != nil {
		if ctx.Err() != nil {
			return // stopping: the job resumes with this buyer
		}
		outcome = "failed"
		if errors.Is(err, flows.ErrBlocked) {
			outcome = "blocked"
		}
	}
	_ = br.jobs.Record(ctx, id, outcome)
}

func (br *broadcaster) finish(ctx context.Context, id, status string) {
	if status != "" {
		if _, err := br.jobs.Finish(ctx, id, status); err != nil {
			return
		}
	}
	_ = br.jobs.Close(ctx, id)
	j, err := br.jobs.Get(ctx, id)
	if err != nil {
		return
	}
	// The progress message keeps the last progress, without its Stop
	// button; the report is sent once, as a new message the admin is
	// notified of, and not also edited in (the admin would read it twice).
	br.edit(ctx, j, nil)
	if first, err := br.jobs.MarkReported(ctx, id); err != nil || !first {
		return
	}
	_, _ = br.tg.Send(ctx, j.AdminChat, br.reportText(j), nil)
}

func (br *broadcaster) showProgress(ctx context.Context, id string) {
	if j, err := br.jobs.Get(ctx, id); err == nil {
		br.edit(ctx, j, br.stopButton(j))
	}
}

func (br *broadcaster) edit(ctx context.Context, j *work.BroadcastJob, rows [][]flows.Button) {
	if j.ProgressMsg == 0 {
		return
	}
	_ = br.tg.EditText(ctx, j.AdminChat, j.ProgressMsg, br.progressText(j), rows)
}

// broadcastFlow is the admin's compose -> preview -> send conversation.
type broadcastFlow struct{ br *broadcaster }

func (f broadcastFlow) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = "compose"
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

func (f broadcastFlow) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if !env.User.Admin {
		s.Clear()
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("err.unknown_command")}}, Save: true, NoScreen: true}, nil
	}
	switch {
	case s.Step == "compose" && ev.Kind == flows.EvText && ev.Text != "":
		s.Set("text", locales.Escape(ev.Text))
		s.Goto("confirm")
		sc, err := f.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	case s.Step == "compose":
		sc, err := f.Show(ctx, env, s)
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("bc.text_only")}}, Screen: sc}, err
	case s.Step == "confirm" && ev.Kind == flows.EvButton && ev.Button.Action == "send":
		text := s.Get("text")
		s.Clear()
		if err := f.br.start(ctx, ev.User.ID, env.Lang, text, env.Now); err != nil {
			return nil, err
		}
		return &flows.Reply{Answer: env.T("bc.started"), Save: true, NoScreen: true}, nil
	case s.Step == "confirm" && ev.Kind == flows.EvButton && ev.Button.Action == "edit":
		s.GoBack()
		sc, err := f.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

func (f broadcastFlow) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	cancel := flows.Button{Text: env.T("btn.cancel"), Action: "x"}
	if s.Step != "confirm" {
		return &flows.Screen{Text: env.T("bc.compose"), Rows: [][]flows.Button{{cancel}}}, nil
	}
	n, err := f.br.users.CountBuyers(ctx)
	if err != nil {
		return nil, err
	}
	return &flows.Screen{
		Text: env.N("bc.preview", n, "text", s.Get("text")),
		Rows: [][]flows.Button{{{Text: env.T("btn.bc_send"), Action: "send"}}, {{Text: env.T("btn.edit"), Action: "edit"}, cancel}},
	}, nil
}
