package admin

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"shopbot/bot/jobs"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// broadcaster runs admin broadcasts as resumable jobs in Redis: any
// process may carry a job on after another stopped. A broadcast goes to an
// audience (state.Audience) of the buyers' profiles (records.Users),
// listed once when it starts; a scheduled one waits on the broadcasts'
// own durable schedule, whose due job any replica runs once.
type broadcaster struct {
	tg      Telegram
	users   *records.Users
	wallets *records.Wallets // nil: nobody holds a wallet balance
	orders  *records.Orders  // the delivered orders that fill the profiles once
	log     *slog.Logger
	jobs    *work.Broadcasts
	sched   *sched.Schedule // nil: no scheduling
	engine  *flows.Engine
	botName func() string
	now     func() time.Time
	owner   string
	wake    chan struct{}
	every   time.Duration // how often the admin's progress message is updated
	// audit records an admin's action in the audit log (Admin.audit).
	audit func(ctx context.Context, by state.Actor, action, target, detail string)
}

func newBroadcaster(d Deps) *broadcaster {
	name := d.BotName
	if name == nil {
		name = func() string { return "" }
	}
	return &broadcaster{
		tg: d.Telegram, users: d.Users, wallets: d.Wallets, orders: d.Orders, log: d.Log, jobs: d.Broadcasts,
		sched: d.BroadcastSchedule, engine: d.Engine, botName: name, now: d.Now,
		owner: strconv.FormatInt(time.Now().UnixNano(), 36), wake: make(chan struct{}, 1), every: 2 * time.Second,
	}
}

// Actions and the session variables of broadcasts.
const (
	// bcActStop stops a broadcast, or cancels a scheduled one (a global
	// button on its progress or scheduling message; arg: the job's id).
	bcActStop flows.Action = "bcx"
	// bcActShow shows a broadcast's figures again, its opens with them (a
	// global button on its report; arg: the job's id).
	bcActShow     flows.Action = "bcr"
	bcActSend     flows.Action = "send"  // send (or schedule) what was composed
	bcActEdit     flows.Action = "edit"  // write it again
	bcActPreview  flows.Action = "prev"  // the message again, as buyers get it
	bcActAudience flows.Action = "aud"   // the audience picker; arg: a kind or a whole audience
	bcActButtons  flows.Action = "btns"  // the buttons step
	bcActNoButton flows.Action = "nobtn" // drop the buttons
	bcActWhen     flows.Action = "when"  // the schedule step
	bcActNow      flows.Action = "now"   // send at once, not at a time
	bcActBack     flows.Action = "back"  // back to the summary
	// bcKeyText is the text composed (HTML, escaped): the message, or the
	// media's caption.
	bcKeyText flows.Key = "text"
	// bcKeyMedia and bcKeyFile are the media sent in the compose step:
	// its kind (state.MediaPhoto...) and file_id.
	bcKeyMedia flows.Key = "media"
	bcKeyFile  flows.Key = "file"
	// bcKeyButtons are the buttons (JSON of state.BroadcastButton).
	bcKeyButtons flows.Key = "buttons"
	// bcKeyAudience is the audience chosen (state.Audience.String).
	bcKeyAudience flows.Key = "aud"
	// bcKeyAt is when to send it (unix seconds; unset: at once).
	bcKeyAt flows.Key = "at"
	// bcKeyDays is the audience kind whose number of days is asked for.
	bcKeyDays flows.Key = "dkind"
)

// register adds /broadcast, its compose flow and the stop and results
// buttons to the engine, for those who may broadcast.
func (br *broadcaster) register(e *flows.Engine) {
	e.AdminFlow("broadcast", flows.PermBroadcast, "cmd.broadcast", broadcastFlow{br})
	e.AdminCommand("broadcast", flows.PermBroadcast, "cmd.broadcast", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		s.Enter("broadcast", "compose", ev.Now.Add(e.FlowTTL))
		r, err := broadcastFlow{br}.Start(ctx, env, s, "")
		if r != nil {
			r.Save = true
		}
		return r, err
	})
	e.AdminButton(bcActStop, flows.PermBroadcast, "staff.btn.bc_stop", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		did, err := br.stop(ctx, ev.Button.Arg)
		if err != nil {
			return nil, err
		}
		if did {
			br.audit(ctx, chatActor(env), state.AuditBroadcastStop, "broadcast "+ev.Button.Arg, "")
		}
		return &flows.Reply{Answer: env.T("bc.cancelled"), NoScreen: true}, nil
	})
	e.AdminButton(bcActShow, flows.PermBroadcast, "staff.btn.bc_show", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		j, err := br.jobs.Get(ctx, ev.Button.Arg)
		if errors.Is(err, work.ErrBroadcastNotFound) {
			return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
		}
		if err != nil {
			return nil, err
		}
		if ev.MsgID != 0 {
			_ = br.tg.EditText(ctx, env.User.ID, ev.MsgID, br.reportText(j), br.showButton(j))
		}
		return &flows.Reply{Answer: env.T("bc.refreshed"), NoScreen: true}, nil
	})
}

// stop stops a running broadcast or cancels a scheduled one; false when it
// was neither.
func (br *broadcaster) stop(ctx context.Context, id string) (bool, error) {
	did, err := br.jobs.Finish(ctx, id, work.BroadcastCancelled)
	if err == nil && did && br.sched != nil {
		_ = br.sched.Remove(ctx, scheduleJob(id))
	}
	return did, err
}

// scheduleJob is a scheduled broadcast's job on the schedule.
func scheduleJob(id string) string { return "bcast:" + id }

// plan checks a broadcast as composed (the chat's or the console's) and
// returns it ready to send: the text escaped, the buttons checked, the
// audience the shop's. refusal is the locale key of what is wrong.
func (br *broadcaster) check(p state.BroadcastPlan, now time.Time) (refusal string) {
	switch {
	case p.Media != "" && p.Media != state.MediaPhoto && p.Media != state.MediaVideo && p.Media != state.MediaDocument,
		p.Media != "" && p.FileID == "",
		p.Media == "" && strings.TrimSpace(p.Text) == "":
		return "bc.text_only"
	case !fitsText(locales.Plain(p.Text), p.Media):
		return "bc.too_long"
	case !checkAudience(p.Audience, br.engine.Langs):
		return "bc.bad_audience"
	case !checkAt(p.At, now), !p.At.IsZero() && br.sched == nil:
		return "bc.when_bad"
	}
	return ""
}

// count is the size of audience a now.
func (br *broadcaster) count(ctx context.Context, a state.Audience) (state.AudienceCount, error) {
	return br.users.CountAudience(ctx, a, br.now(), br.wallets)
}

// start creates the job of plan p for admin: at once (with its progress
// message) or at p.At (with a message that says when, and cancels it).
func (br *broadcaster) start(ctx context.Context, admin int64, lang locales.Lang, p state.BroadcastPlan, now time.Time) (string, error) {
	c, err := br.count(ctx, p.Audience)
	if err != nil {
		return "", err
	}
	j := &work.BroadcastJob{
		AdminChat: admin, Text: p.Text, Lang: string(lang), Media: p.Media, FileID: p.FileID,
		Buttons: encodeButtons(p.Buttons), Audience: p.Audience.String(), At: p.At, Total: c.Members, CreatedAt: now,
	}
	if _, err := br.jobs.Create(ctx, j); err != nil {
		return "", err
	}
	if !p.At.IsZero() {
		if err := br.sched.Put(ctx, scheduleJob(j.ID), p.At); err != nil {
			_, _ = br.jobs.Finish(ctx, j.ID, work.BroadcastCancelled)
			return "", err
		}
		text := locales.N(lang, "bc.scheduled", c.Reach(), "id", j.ID, "at", whenText(p.At), "audience", audienceName(lang, p.Audience))
		d, _ := flows.EncodeCallback(flows.GlobalNonce, bcActStop, j.ID)
		_, _ = br.tg.Send(ctx, admin, text, [][]flows.Button{{{Text: locales.T(lang, "btn.bc_cancel"), Data: d}}})
		return j.ID, nil
	}
	br.announce(ctx, j)
	br.kick()
	return j.ID, nil
}

// announce sends the admin the progress message of a job that starts.
func (br *broadcaster) announce(ctx context.Context, j *work.BroadcastJob) {
	if j.AdminChat == 0 {
		return
	}
	msg, err := br.tg.Send(ctx, j.AdminChat, br.progressText(j), br.stopButton(j))
	if err == nil {
		_ = br.jobs.SetProgressMsg(ctx, j.ID, msg)
	}
}

func (br *broadcaster) kick() {
	select {
	case br.wake <- struct{}{}:
	default:
	}
}

func (br *broadcaster) stopButton(j *work.BroadcastJob) [][]flows.Button {
	lang := locales.Lang(j.Lang)
	d, _ := flows.EncodeCallback(flows.GlobalNonce, bcActStop, j.ID)
	return [][]flows.Button{{{Text: locales.T(lang, "btn.bc_stop"), Data: d}}}
}

func (br *broadcaster) showButton(j *work.BroadcastJob) [][]flows.Button {
	lang := locales.Lang(j.Lang)
	d, _ := flows.EncodeCallback(flows.GlobalNonce, bcActShow, j.ID)
	return [][]flows.Button{{{Text: locales.T(lang, "btn.bc_refresh"), Data: d}}}
}

// progressText is the progress message's text, whatever the job's status.
func (br *broadcaster) progressText(j *work.BroadcastJob) string {
	lang := locales.Lang(j.Lang)
	return locales.T(lang, "bc.progress", "id", j.ID, "done", min(j.Pos, j.Total), "total", j.Total,
		"sent", j.Sent, "blocked", j.Blocked, "failed", j.Failed) + optedOut(j)
}

// optedOut is the count of buyers skipped for turning marketing messages
// off, as a line of the progress and the report ("" for none).
func optedOut(j *work.BroadcastJob) string {
	if j.OptedOut == 0 {
		return ""
	}
	return "\n" + locales.T(locales.Lang(j.Lang), "bc.skipped_optout", "n", j.OptedOut)
}

// opensLine is how many buyers opened the shop through the broadcast's
// link, as a line of the report ("" when it carries none).
func opensLine(j *work.BroadcastJob) string {
	if !hasLink(decodeButtons(j.Buttons)) {
		return ""
	}
	return "\n" + locales.T(locales.Lang(j.Lang), "bc.opens", "n", j.Opens)
}

func hasLink(bs []state.BroadcastButton) bool {
	for _, b := range bs {
		if b.Link != "" {
			return true
		}
	}
	return false
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
		"sent", j.Sent, "blocked", j.Blocked, "failed", j.Failed) + optedOut(j) + opensLine(j)
}

// run carries every active job on until ctx ends; beside it, the due
// scheduled broadcasts are released (once, by whichever replica claims
// their job) and the profiles are filled with the orders delivered before
// they were kept.
func (br *broadcaster) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	if br.sched != nil {
		w := &jobs.Worker{
			What: "scheduled broadcast", Sched: br.sched, Now: br.now, Log: br.log,
			Tick: time.Second, Lease: 30 * time.Second, Timeout: 30 * time.Second, Parallel: 1,
			Kinds: []string{sched.Kind(scheduleJob("0"))},
			Step:  br.release,
		}
		wg.Go(func() { w.Run(ctx) })
	}
	wg.Go(func() { br.fillProfiles(ctx) })
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

// release is the step of a scheduled broadcast's job: the broadcast starts
// running, once whatever replicas run the job (work.Broadcasts.Release).
func (br *broadcaster) release(ctx context.Context, j sched.Job) (time.Time, bool) {
	id, ok := strings.CutPrefix(j.Name, "bcast:")
	if !ok {
		return jobs.LeaveForNewer(ctx)
	}
	released, err := br.jobs.Release(ctx, id)
	if err != nil {
		br.log.Warn("release a scheduled broadcast", "job", id, "err", err)
		return br.now().Add(10 * time.Second), false
	}
	if released {
		br.log.Info("scheduled broadcast due", "job", id)
		br.kick()
	}
	return time.Time{}, false
}

// fillProfiles records the orders delivered before the profiles were kept
// into them, once for the store (one replica at a time; running it again
// changes nothing).
func (br *broadcaster) fillProfiles(ctx context.Context) {
	if br.orders == nil {
		return
	}
	if done, err := br.users.ProfilesFilled(ctx); err != nil || done {
		return
	}
	const lock, lease = "profiles", 10 * time.Minute
	if ok, err := br.jobs.Lock(ctx, lock, br.owner, lease); err != nil || !ok {
		return
	}
	defer func() { _ = br.jobs.Unlock(context.WithoutCancel(ctx), lock, br.owner) }()
	n, err := br.users.FillProfiles(ctx, br.orders)
	if err != nil {
		if ctx.Err() == nil {
			br.log.Warn("fill buyer profiles from delivered orders", "err", err)
		}
		return
	}
	br.log.Info("buyer profiles filled from delivered orders", "orders", n)
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
	renewed := time.Now()
	renew := func() bool {
		if time.Since(renewed) <= lease/3 {
			return true
		}
		if ok, err := br.jobs.Lock(ctx, id, br.owner, lease); err != nil || !ok {
			return false
		}
		renewed = time.Now()
		return true
	}
	if !j.Listed {
		if j.ProgressMsg == 0 {
			br.announce(ctx, j) // a scheduled broadcast, now due
		}
		if !br.list(ctx, j, renew) {
			return
		}
		if j, err = br.jobs.Get(ctx, id); err != nil {
			return
		}
		br.showProgress(ctx, id)
	}
	m := br.message(j)
	shown := time.Now()
	for ctx.Err() == nil {
		if !renew() {
			return
		}
		if time.Since(shown) > br.every {
			br.showProgress(ctx, id)
			shown = time.Now()
		}
		if !br.sendNext(ctx, j, m) {
			return
		}
	}
}

// list lists a job's recipients: the buyers of its audience, in the order
// they started the bot, whatever their opt-out or block (each is counted
// when their turn comes). A job of a build before audiences goes to every
// buyer: its positions stay those of the buyers' order.
func (br *broadcaster) list(ctx context.Context, j *work.BroadcastJob, renew func() bool) bool {
	a, err := state.ParseAudience(j.Audience)
	if err != nil {
		br.log.Warn("broadcast audience unreadable; stopping it", "job", j.ID, "audience", j.Audience)
		br.finish(ctx, j.ID, work.BroadcastCancelled)
		return false
	}
	if err := br.jobs.ResetRecipients(ctx, j.ID); err != nil {
		return false
	}
	wallets := br.wallets
	if !a.NeedsWallet() {
		wallets = nil
	}
	now := br.now()
	var total int64
	err = br.users.Walk(ctx, wallets, func(page []state.BuyerProfile) error {
		if !renew() {
			return errLockLost
		}
		var ids []int64
		for _, p := range page {
			if a.Match(p, now) {
				ids = append(ids, p.ID)
			}
		}
		total += int64(len(ids))
		return br.jobs.AddRecipients(ctx, j.ID, ids)
	})
	if err == nil {
		err = br.jobs.SetListed(ctx, j.ID, total)
	}
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, errLockLost) {
			br.log.Warn("list a broadcast's audience", "job", j.ID, "err", err)
		}
		return false
	}
	br.log.Info("broadcast audience listed", "job", j.ID, "audience", a.String(), "recipients", total)
	return true
}

var errLockLost = errors.New("broadcast lock lost")

// bulkMessage is what a job sends each recipient.
type bulkMessage struct {
	media, file, text string
	rows              [][]flows.Button
}

func (br *broadcaster) message(j *work.BroadcastJob) bulkMessage {
	return bulkMessage{media: j.Media, file: j.FileID, text: j.Text, rows: buttonRows(decodeButtons(j.Buttons), j.ID, br.botName())}
}

// sendNext takes the job's next recipient and sends them its message. It
// finishes even if shutdown has begun, so a graceful restart loses
// nobody; it returns false when the job has no recipients left or is no
// longer running.
func (br *broadcaster) sendNext(ctx context.Context, j *work.BroadcastJob, m bulkMessage) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	buyer, ok, err := br.jobs.TakeRecipient(ctx, j.ID)
	switch {
	case errors.Is(err, work.ErrBroadcastStopped):
		br.finish(ctx, j.ID, "")
		return false
	case err != nil:
		br.log.Warn("broadcast take", "job", j.ID, "err", err)
		return false
	case !ok:
		br.finish(ctx, j.ID, work.BroadcastDone)
		return false
	}
	br.sendOne(ctx, j.ID, m, buyer)
	return true
}

func (br *broadcaster) sendOne(ctx context.Context, id string, m bulkMessage, buyer int64) {
	off, blocked, err := br.users.Reachable(ctx, buyer)
	switch {
	case err != nil:
		_ = br.jobs.Record(ctx, id, "failed") // not known to be on: never sent
		return
	case off: // turned off with /settings: never sent
		_ = br.jobs.Record(ctx, id, "optout")
		return
	case blocked:
		_ = br.jobs.Record(ctx, id, "blocked")
		return
	}
	outcome := "sent"
	if _, err := br.tg.SendBulk(ctx, buyer, m.media, m.file, m.text, m.rows); err != nil {
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
	if first, err := br.jobs.MarkReported(ctx, id); err != nil || !first || j.AdminChat == 0 {
		return
	}
	_, _ = br.tg.Send(ctx, j.AdminChat, br.reportText(j), br.showButton(j))
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

// Opened counts user as one who started the bot through broadcast id's
// link (bot.Broadcasts).
func (br *broadcaster) opened(ctx context.Context, id string, user int64) {
	if _, err := br.jobs.Opened(ctx, id, user); err != nil {
		br.log.Warn("count a broadcast's open", "job", id, "err", err)
	}
}
