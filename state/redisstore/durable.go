package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// SyncMode is how Durability.Sync makes a write durable on one Redis node.
type SyncMode string

const (
	// SyncNone: Sync returns at once. What survives a crash is whatever the
	// server's own settings keep (see Persistence.Guarantee).
	SyncNone SyncMode = "none"
	// SyncWait: WAIT for replicas (Redis without WAITAOF or without AOF, but
	// with an online replica). A failover to that replica keeps the write; a
	// crash of the whole set may not.
	SyncWait SyncMode = "wait"
	// SyncWaitAOF: WAITAOF 1 0 (the local AOF is fsynced), then WAIT for a
	// replica when there is one (Redis >= 7.2 with appendonly yes).
	SyncWaitAOF SyncMode = "waitaof"
)

// ErrNotDurable matches (errors.Is) every error Sync returns when it could
// not confirm durability: a timeout, fewer acknowledgements than needed, a
// lost connection. The write Sync was called after has happened all the
// same; it may still be lost by a crash in the next moments. Callers treat it
// as "retry later": do not take the next money step yet, come back to it.
var ErrNotDurable = errors.New("state: write not confirmed durable")

// NotDurableError is what Sync returns when durability was not confirmed.
// It says what was acknowledged. The write itself happened.
type NotDurableError struct {
	Node         string   // node address ("" for the client's only node)
	Mode         SyncMode // the mode Sync used
	WantLocal    int      // local AOF fsyncs asked for (0 or 1)
	Local        int      // local AOF fsyncs confirmed
	WantReplicas int      // replicas asked for
	Replicas     int      // replicas that confirmed
	Err          error    // the cause, when a command failed
}

func (e *NotDurableError) Error() string {
	var b strings.Builder
	b.WriteString("state: write not confirmed durable")
	if e.Node != "" {
		b.WriteString(" on " + e.Node)
	}
	if e.Mode != "" {
		b.WriteString(" (" + string(e.Mode) + ")")
	}
	if e.WantLocal > 0 {
		fmt.Fprintf(&b, ": local AOF %d of %d", e.Local, e.WantLocal)
	}
	if e.WantReplicas > 0 {
		fmt.Fprintf(&b, ": replicas %d of %d", e.Replicas, e.WantReplicas)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotDurable) true.
func (e *NotDurableError) Is(target error) bool { return target == ErrNotDurable }

// Unwrap returns the cause, so errors.Is(err, context.DeadlineExceeded) works.
func (e *NotDurableError) Unwrap() error { return e.Err }

// Persistence is what a probe of one Redis node found.
type Persistence struct {
	Node            string // node address ("" for the client's only node)
	Version         string // redis_version; "" when INFO does not say (an embedded store, a proxy)
	Role            string // master or slave
	Cluster         bool   // cluster_enabled
	AOF             bool   // aof_enabled
	AppendFsync     string // always, everysec or no; "" when CONFIG GET is not allowed
	Save            string // the RDB save schedule, "" for none; meaningful when SaveKnown
	SaveKnown       bool
	Replicas        int    // replicas in state online
	MaxmemoryPolicy string // "" when unknown
	Mode            SyncMode
	WaitReplicas    int    // replicas Sync waits for (0 or more)
	Note            string // why the mode is weaker than the settings suggest, if it is
	ProbedAt        time.Time
}

// Evicts reports whether Redis may drop keys under memory pressure: any
// maxmemory-policy other than noeviction. An evicted order is lost money.
func (p Persistence) Evicts() bool {
	return p.MaxmemoryPolicy != "" && p.MaxmemoryPolicy != "noeviction"
}

// Summary is one line: version, AOF and fsync policy, RDB, replicas.
func (p Persistence) Summary() string {
	if p.Version == "" {
		return "redis version unknown (INFO does not describe the server)"
	}
	parts := []string{"redis " + p.Version}
	if p.Cluster {
		parts = append(parts, "cluster node "+p.Node)
	}
	switch {
	case !p.AOF:
		parts = append(parts, "AOF off")
	case p.AppendFsync == "":
		parts = append(parts, "AOF on (appendfsync unknown)")
	default:
		parts = append(parts, "AOF on, appendfsync "+p.AppendFsync)
	}
	switch {
	case !p.SaveKnown:
		parts = append(parts, "RDB schedule unknown")
	case p.Save == "":
		parts = append(parts, "RDB off")
	default:
		parts = append(parts, "RDB save "+p.Save)
	}
	parts = append(parts, strconv.Itoa(p.Replicas)+" replicas online")
	if p.MaxmemoryPolicy != "" {
		parts = append(parts, "maxmemory-policy "+p.MaxmemoryPolicy)
	}
	return strings.Join(parts, ", ")
}

// Guarantee says what a crash or failover can lose: the money writes Sync
// confirms, and every other write.
func (p Persistence) Guarantee() string {
	var g string
	local := p.localLoss()
	switch p.Mode {
	case SyncWaitAOF:
		g = "money writes are fsynced to the AOF"
		if p.WaitReplicas > 0 {
			g += fmt.Sprintf(" and on %d replica(s)", p.WaitReplicas)
		}
		g += " before the next step (WAITAOF); other writes: " + local
		if p.WaitReplicas == 0 {
			g += "; no replica, so losing the disk loses the data"
		}
	case SyncWait:
		g = fmt.Sprintf("money writes reach %d replica(s) before the next step (WAIT): a failover to an up-to-date replica keeps them, a crash of every node at once does not; other writes: %s", p.WaitReplicas, local)
	default:
		g = "money writes are not confirmed (no WAITAOF, no replica): " + local
	}
	if p.Note != "" {
		g += " (" + p.Note + ")"
	}
	if p.Evicts() {
		g += "; DANGER: maxmemory-policy " + p.MaxmemoryPolicy + " may evict orders, use noeviction"
	}
	return g
}

// localLoss is what a crash of this node alone loses, from its settings.
func (p Persistence) localLoss() string {
	switch {
	case p.Version == "":
		return "unknown, assume a restart loses everything"
	case p.AOF && p.AppendFsync == "always":
		return "a crash loses nothing acknowledged (appendfsync always)"
	case p.AOF && p.AppendFsync == "everysec":
		return "a crash can lose about the last second (appendfsync everysec)"
	case p.AOF && p.AppendFsync == "no":
		return "a crash can lose what the OS had not flushed, often about 30 s (appendfsync no)"
	case p.AOF:
		return "a crash can lose about the last second or more (appendfsync unknown)"
	case p.SaveKnown && p.Save != "":
		return "a crash loses everything since the last RDB snapshot (save " + p.Save + ")"
	case p.SaveKnown:
		return "no persistence: a restart loses everything"
	default:
		return "AOF off and the RDB schedule unknown: a crash loses at least everything since the last snapshot"
	}
}

// Durability confirms that a money write survives a crash or failover
// before the shop takes the next step, as far as the Redis deployment
// allows. Build one per client and share it; it is safe for concurrent use.
//
// It probes each node lazily (INFO; CONFIG GET appendfsync and save when
// allowed) and again after a failure and every few minutes, because a
// Sentinel failover or a CONFIG SET may change what the node can do. Then:
//   - Redis >= 7.2 with AOF on: WAITAOF 1 0 (local fsync), plus WAIT for a
//     replica when one is online;
//   - otherwise, with an online replica: WAIT for it;
//   - otherwise (also miniredis, proxies that hide INFO): nothing, and
//     Persistence.Guarantee says what a crash can lose.
//
// WAIT and WAITAOF only cover writes made on their own connection, and a
// pooled client makes the money write on any connection. So Sync first
// writes a small fence key (same node, same slot) on its connection and waits
// for that: replication and the AOF are ordered, so a fence that is durable
// covers every write acknowledged before Sync was called.
type Durability struct {
	rdb      redis.UniversalClient
	prefix   string
	timeout  time.Duration
	every    time.Duration
	replicas int
	now      func() time.Time
	report   func(Persistence)
	observe  func(SyncMode, error)

	mu     sync.Mutex
	nodes  map[string]*nodeState
	probes atomic.Int64 // probes made, for tests
}

type nodeState struct {
	mu         sync.Mutex
	p          Persistence
	probed     bool
	stale      bool
	noWaitAOF  bool // WAITAOF was refused (unknown command, NOPERM)
	noWait     bool // WAIT was refused
	reportedAs string
	// replicasAt is when the node last had a replica online. For
	// replicaLoss after it, a probe that finds none still requires one:
	// during a failover the old master loses its replica (promoted) and
	// keeps taking writes until it is demoted, and a write acknowledged
	// there without a replica is lost with the demotion.
	replicasAt time.Time
}

// replicaLoss is how long a node that lost its replicas still requires
// one: long enough for a failover to finish and the old master to rejoin
// as a replica; after it, a node whose replica is gone for good takes
// writes again, with the guarantee its own settings give.
const replicaLoss = 30 * time.Second

// DurabilityOption configures NewDurability.
type DurabilityOption func(*Durability)

// WithSyncTimeout bounds each WAIT/WAITAOF (default 2 s). Keep it below the
// time a buyer may wait for the next step.
func WithSyncTimeout(d time.Duration) DurabilityOption {
	return func(x *Durability) {
		if d > 0 {
			x.timeout = d
		}
	}
}

// WithReprobeEvery sets how old a probe may get before the next Sync probes
// again (default 5 minutes).
func WithReprobeEvery(d time.Duration) DurabilityOption {
	return func(x *Durability) {
		if d > 0 {
			x.every = d
		}
	}
}

// WithReplicas sets how many online replicas Sync waits for (default 1,
// capped at the replicas online). One is what a Sentinel failover needs: it
// promotes the most up-to-date replica; waiting for all would let one slow
// replica stall every payment.
func WithReplicas(n int) DurabilityOption {
	return func(x *Durability) {
		if n >= 0 {
			x.replicas = n
		}
	}
}

// WithModeReport calls f after a probe whose mode or guarantee differs from
// the node's previous one: once at start, then only on a change (a failover,
// a CONFIG SET, a replica gone). Use it to log the guarantee. f runs while
// the node's state is locked: it must not call the Durability.
func WithModeReport(f func(Persistence)) DurabilityOption {
	return func(x *Durability) { x.report = f }
}

// WithSyncObserver calls f after every Sync, SyncWritten and SyncKeys with
// the mode the wait used ("" when the node could not be probed or
// reached) and what it returned: nil when confirmed, an error matching
// ErrNotDurable when not. The shop counts them in its metrics
// (shopbot_durability_syncs_total). f must be quick and must not call the
// Durability.
func WithSyncObserver(f func(mode SyncMode, err error)) DurabilityOption {
	return func(x *Durability) { x.observe = f }
}

// withClock replaces time.Now (tests).
func withClock(now func() time.Time) DurabilityOption {
	return func(x *Durability) { x.now = now }
}

// NewDurability returns a Durability for rdb. Its fence keys live under
// prefix (DefaultPrefix when empty) and expire after a minute.
func NewDurability(rdb redis.UniversalClient, prefix string, opts ...DurabilityOption) *Durability {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	d := &Durability{rdb: rdb, prefix: prefix, timeout: 2 * time.Second, every: 5 * time.Minute,
		replicas: 1, now: time.Now, nodes: map[string]*nodeState{}}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Sync makes the writes acknowledged before it durable as far as the
// deployment allows (see Durability). Call it after a money write (the
// placing intent, the upstream number, a wallet debit or credit) and before
// the step that depends on it. key is a key the write touched: on a
// ClusterClient it picks the master that owns the slot and is required;
// other clients ignore it.
//
// A nil error means durable as Guarantee describes (possibly nothing more
// than Redis's own settings). An error matching ErrNotDurable means the write
// happened but was not confirmed durable: retry the step later.
func (d *Durability) Sync(ctx context.Context, key string) error {
	return d.sync(ctx, key, false)
}

// ErrWrittenElsewhere means the key a caller just wrote is not on the node
// that owns it now: the write went to a master that was being replaced (a
// failover the client had not seen yet) and will be lost with it. The
// caller writes again.
var ErrWrittenElsewhere = errors.New("state: the write is not on the current master (it went to a master being replaced)")

// SyncWritten is Sync for a key the caller just created or changed and that
// is never deleted (an order, a wallet ledger): it also checks, on the node
// it waits on, that the key is there. Without that, a write that went to a
// master just replaced (a failover the client had not noticed, a cluster
// TAKEOVER) could be confirmed by waiting on the new master, and then be
// lost with the old one.
func (d *Durability) SyncWritten(ctx context.Context, key string) error {
	return d.sync(ctx, key, true)
}

func (d *Durability) sync(ctx context.Context, key string, written bool) error {
	mode, err := d.syncMode(ctx, key, written)
	if d.observe != nil {
		d.observe(mode, err)
	}
	return err
}

// syncMode is sync, also returning the mode it waited with.
func (d *Durability) syncMode(ctx context.Context, key string, written bool) (SyncMode, error) {
	exists := ""
	if written {
		exists = key
	}
	switch c := d.rdb.(type) {
	case *redis.ClusterClient:
		if key == "" {
			return "", errors.New("state: Durability.Sync on Redis Cluster needs the key that was written")
		}
		m, err := c.MasterForKey(ctx, key)
		if err != nil {
			return "", &NotDurableError{Err: err}
		}
		return d.syncNode(ctx, m, m.Options().Addr, key, true, exists)
	case *redis.Client:
		return d.syncNode(ctx, c, "", "", false, exists)
	default:
		// A Ring shards without replication or a way to name the shard:
		// nothing to wait for.
		return SyncNone, nil
	}
}

// Exact reports whether a write that Sync confirmed on the node owning key
// survives any crash: the AOF is fsynced before Sync returns (WAITAOF) or
// on every write (appendfsync always). Otherwise a crash may take the last
// second or so of writes with it, and callers that hand over what cannot
// be taken back (codes) wait until their record is older than that. An
// unreachable node is not exact.
func (d *Durability) Exact(ctx context.Context, key string) bool {
	c, node, err := d.nodeClient(ctx, key)
	if err != nil {
		return false
	}
	ns := d.node(node)
	ns.mu.Lock()
	defer ns.mu.Unlock()
	p, err := d.persistenceLocked(ctx, c, ns, node)
	if err != nil {
		return false
	}
	return p.Mode == SyncWaitAOF || p.AOF && p.AppendFsync == "always"
}

// SyncKeys is Sync after writes to several keys: it waits once per master
// that holds one of them (once in all but on a cluster), as a fence on a
// node covers every write that node acknowledged before it.
func (d *Durability) SyncKeys(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	c, ok := d.rdb.(*redis.ClusterClient)
	if !ok {
		return d.Sync(ctx, keys[0])
	}
	mode, err := d.syncMasters(ctx, c, keys)
	if d.observe != nil {
		d.observe(mode, err)
	}
	return err
}

// syncMasters waits once on each master of c that holds one of keys and
// returns the mode of the last wait.
func (d *Durability) syncMasters(ctx context.Context, c *redis.ClusterClient, keys []string) (SyncMode, error) {
	done := map[string]bool{}
	var mode SyncMode
	for _, k := range keys {
		m, err := c.MasterForKey(ctx, k)
		if err != nil {
			return mode, &NotDurableError{Err: err}
		}
		addr := m.Options().Addr
		if done[addr] {
			continue
		}
		done[addr] = true
		if mode, err = d.syncNode(ctx, m, addr, k, true, ""); err != nil {
			return mode, err
		}
	}
	return mode, nil
}

// Probe probes the node that owns key (any node but a cluster's: key is
// ignored) now, whatever the last probe found, and returns the result.
func (d *Durability) Probe(ctx context.Context, key string) (Persistence, error) {
	c, node, err := d.nodeClient(ctx, key)
	if err != nil {
		return Persistence{}, err
	}
	ns := d.node(node)
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.stale = true
	return d.persistenceLocked(ctx, c, ns, node)
}

// Guarantee is the guarantee of every node probed so far, one per line, or
// a note that nothing was probed yet.
func (d *Durability) Guarantee() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var lines []string
	for node, ns := range d.nodes {
		ns.mu.Lock()
		if ns.probed {
			g := string(ns.p.Mode) + ": " + ns.p.Guarantee()
			if node != "" {
				g = node + ": " + g
			}
			lines = append(lines, g)
		}
		ns.mu.Unlock()
	}
	if len(lines) == 0 {
		return "not probed yet"
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func (d *Durability) nodeClient(ctx context.Context, key string) (*redis.Client, string, error) {
	switch c := d.rdb.(type) {
	case *redis.ClusterClient:
		if key == "" {
			key = d.prefix + "durable:probe"
		}
		m, err := c.MasterForKey(ctx, key)
		if err != nil {
			return nil, "", err
		}
		return m, m.Options().Addr, nil
	case *redis.Client:
		return c, "", nil
	default:
		return nil, "", fmt.Errorf("state: Durability cannot probe a %T", d.rdb)
	}
}

func (d *Durability) node(name string) *nodeState {
	d.mu.Lock()
	defer d.mu.Unlock()
	ns := d.nodes[name]
	if ns == nil {
		ns = &nodeState{}
		d.nodes[name] = ns
	}
	return ns
}

// syncNode waits on one node and returns the mode it waited with ("" when
// the node could not be probed).
func (d *Durability) syncNode(ctx context.Context, c *redis.Client, node, key string, cluster bool, exists string) (SyncMode, error) {
	ns := d.node(node)
	for attempt := 0; ; attempt++ {
		ns.mu.Lock()
		p, err := d.persistenceLocked(ctx, c, ns, node)
		ns.mu.Unlock()
		if err != nil {
			return "", &NotDurableError{Node: node, Err: err}
		}
		if p.Mode == SyncNone {
			if exists != "" {
				if n, err := c.Exists(ctx, exists).Result(); err != nil {
					return p.Mode, &NotDurableError{Node: node, Err: err}
				} else if n == 0 {
					return p.Mode, &NotDurableError{Node: node, Err: ErrWrittenElsewhere}
				}
			}
			return p.Mode, nil
		}
		stage, ne := d.wait(ctx, c, p, d.fenceKey(key, cluster), exists)
		if ne == nil {
			return p.Mode, nil
		}
		// A failover, a config change or a gone replica: look again next time.
		// A command the server refused (unknown, not allowed, AOF switched off
		// since the probe, a replica now) is retried at once after a fresh
		// probe; a timeout or a shortfall is the caller's to retry.
		refused := ne.Err != nil && isRefusal(ne.Err)
		ns.mu.Lock()
		ns.stale = true
		if refused && isUnsupported(ne.Err) {
			switch stage {
			case "waitaof":
				ns.noWaitAOF = true
			case "wait":
				ns.noWait = true
			}
		}
		ns.mu.Unlock()
		if !refused || attempt > 0 || ctx.Err() != nil {
			return p.Mode, ne
		}
	}
}

// wait writes the fence and waits for it on one connection. stage names
// the command that failed: fence, waitaof or wait.
func (d *Durability) wait(ctx context.Context, c *redis.Client, p Persistence, fence, exists string) (string, *NotDurableError) {
	ne := &NotDurableError{Node: p.Node, Mode: p.Mode}
	conn := c.Conn()
	defer conn.Close()
	if err := conn.Set(ctx, fence, "1", time.Minute).Err(); err != nil {
		ne.Err = err
		return "fence", ne
	}
	if exists != "" {
		// On the node the fence went to: a write that is not here went to
		// a master being replaced, and waiting here would confirm nothing.
		n, err := conn.Exists(ctx, exists).Result()
		if err != nil {
			ne.Err = err
			return "fence", ne
		}
		if n == 0 {
			ne.Err = ErrWrittenElsewhere
			return "exists", ne
		}
	}
	if p.Mode == SyncWaitAOF {
		ne.WantLocal = 1
		r, err := conn.WaitAOF(ctx, 1, 0, d.timeout).Result()
		if err != nil {
			ne.Err = err
			return "waitaof", ne
		}
		if len(r) > 0 {
			ne.Local = int(r[0])
		}
		if ne.Local < 1 {
			return "waitaof", ne
		}
	}
	if p.WaitReplicas > 0 {
		ne.WantReplicas = p.WaitReplicas
		n, err := conn.Wait(ctx, p.WaitReplicas, d.timeout).Result()
		ne.Replicas = int(n)
		if err != nil {
			ne.Err = err
			return "wait", ne
		}
		if ne.Replicas < p.WaitReplicas {
			return "wait", ne
		}
	}
	return "", nil
}

// isUnsupported reports a server that does not offer a command to us.
func isUnsupported(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "unknown command") || strings.Contains(s, "noperm")
}

// isRefusal reports a server error reply that will not go away by waiting:
// an unknown command, a missing permission, WAITAOF without AOF, WAIT on a
// replica.
func isRefusal(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	s := strings.ToLower(err.Error())
	for _, w := range []string{"unknown command", "noperm", "appendonly", "cannot be used", "replica", "readonly", "not allowed"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// persistenceLocked returns the node's probe, probing when there is none,
// it is stale or old. ns.mu is held.
func (d *Durability) persistenceLocked(ctx context.Context, c *redis.Client, ns *nodeState, node string) (Persistence, error) {
	now := d.now()
	old := ns.probed && now.Sub(ns.p.ProbedAt) >= d.every
	if ns.probed && !ns.stale && !old {
		return ns.p, nil
	}
	if old {
		// Refusals are re-learnt now and then: ACLs change, a failover
		// brings another server.
		ns.noWaitAOF, ns.noWait = false, false
	}
	d.probes.Add(1)
	p, err := probe(ctx, c)
	if err != nil {
		return Persistence{}, err
	}
	p.Node, p.ProbedAt = node, now
	held := false
	if p.Replicas > 0 {
		ns.replicasAt = now
	} else if !ns.replicasAt.IsZero() && now.Sub(ns.replicasAt) < replicaLoss && d.replicas > 0 && !ns.noWait {
		// Its replica just went away (a failover under way): require it
		// still, so Sync reports the shortfall instead of nothing to do.
		p.Replicas, held = 1, true
		p.Note = strings.TrimPrefix(p.Note+"; its replica went offline moments ago", "; ")
	}
	p.Mode, p.WaitReplicas, p.Note = decideMode(p, d.replicas, ns.noWaitAOF, ns.noWait)
	ns.p, ns.probed, ns.stale = p, true, held // held: look again at the next Sync
	if id := string(p.Mode) + "\x00" + p.Guarantee(); id != ns.reportedAs {
		ns.reportedAs = id
		if d.report != nil {
			d.report(p)
		}
	}
	return p, nil
}

// probe reads INFO and, when allowed, CONFIG GET appendfsync and save. A
// server that refuses INFO or does not describe itself (miniredis) is not
// an error: it yields a Persistence without a version.
func probe(ctx context.Context, c *redis.Client) (Persistence, error) {
	info, err := c.Info(ctx).Result()
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return Persistence{Note: "INFO refused: " + err.Error()}, nil
		}
		return Persistence{}, err
	}
	p := parseInfo(info)
	if p.Version == "" {
		return p, nil
	}
	if p.Role != "" && p.Role != "master" {
		return Persistence{}, fmt.Errorf("state: connected to a %s, not a master", p.Role)
	}
	cmds, _ := c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.ConfigGet(ctx, "appendfsync")
		pipe.ConfigGet(ctx, "save")
		if p.MaxmemoryPolicy == "" {
			pipe.ConfigGet(ctx, "maxmemory-policy")
		}
		return nil
	})
	for _, cmd := range cmds {
		m, err := cmd.(*redis.MapStringStringCmd).Result()
		if err != nil {
			continue
		}
		if v, ok := m["appendfsync"]; ok {
			p.AppendFsync = v
		}
		if v, ok := m["save"]; ok {
			p.Save, p.SaveKnown = strings.TrimSpace(v), true
		}
		if v, ok := m["maxmemory-policy"]; ok {
			p.MaxmemoryPolicy = v
		}
	}
	return p, nil
}

// parseInfo reads the fields Durability needs from an INFO reply.
func parseInfo(info string) Persistence {
	var p Persistence
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case k == "redis_version":
			p.Version = v
		case k == "role":
			p.Role = v
		case k == "cluster_enabled":
			p.Cluster = v == "1"
		case k == "aof_enabled":
			p.AOF = v == "1"
		case k == "maxmemory_policy":
			p.MaxmemoryPolicy = v
		case strings.HasPrefix(k, "slave") && k != "slave_read_only" && strings.Contains(v, "state=online"):
			if _, err := strconv.Atoi(k[len("slave"):]); err == nil {
				p.Replicas++
			}
		}
	}
	return p
}

// decideMode picks the sync mode for a probed node.
func decideMode(p Persistence, want int, noWaitAOF, noWait bool) (SyncMode, int, string) {
	if p.Version == "" {
		return SyncNone, 0, p.Note
	}
	replicas := min(want, p.Replicas)
	var note string
	if noWait && replicas > 0 {
		note, replicas = "the server refused WAIT", 0
	}
	if p.AOF && versionAtLeast(p.Version, 7, 2) {
		if !noWaitAOF {
			return SyncWaitAOF, replicas, note
		}
		note = strings.TrimPrefix(note+"; the server refused WAITAOF", "; ")
	}
	if replicas > 0 {
		return SyncWait, replicas, note
	}
	return SyncNone, 0, note
}

// versionAtLeast compares a "major.minor.patch" version.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// fenceKey is the key Sync writes before it waits: on a cluster, one in the
// slot of key, so the write goes to the master that owns key.
func (d *Durability) fenceKey(key string, cluster bool) string {
	if !cluster {
		return d.prefix + "durable:fence"
	}
	return d.prefix + "durable:{" + slotTag(KeySlot(key)) + "}"
}

// KeySlot is the Redis Cluster slot of key (CRC16/XMODEM of the hash tag or
// the whole key, mod 16384).
func KeySlot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return int(crc16(key) % 16384)
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

var (
	slotTagsOnce sync.Once
	slotTags     [16384]string
)

// slotTag is a short hash tag whose slot is slot.
func slotTag(slot int) string {
	slotTagsOnce.Do(func() {
		left := len(slotTags)
		for i := 0; left > 0; i++ {
			t := strconv.Itoa(i)
			if s := crc16(t) % 16384; slotTags[s] == "" {
				slotTags[s] = t
				left--
			}
		}
	})
	return slotTags[slot]
}

// ProbeMasters probes every master c writes to, whatever earlier probes
// found: the server of a single-node or Sentinel client (Node is then its
// address as the client knows it, "" for a failover client), every master
// of a cluster (Node its address), sorted by Node. A cluster master that
// cannot be probed is an error naming it.
func ProbeMasters(ctx context.Context, c redis.UniversalClient) ([]Persistence, error) {
	switch cc := c.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		var out []Persistence
		err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			p, err := probe(ctx, m)
			if err != nil {
				return fmt.Errorf("probe %s: %w", m.Options().Addr, err)
			}
			p.Node, p.ProbedAt = m.Options().Addr, time.Now()
			p.Mode, p.WaitReplicas, p.Note = decideMode(p, 1, false, false)
			mu.Lock()
			out = append(out, p)
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
		return out, nil
	case *redis.Client:
		p, err := probe(ctx, cc)
		if err != nil {
			return nil, err
		}
		p.ProbedAt = time.Now()
		if a := cc.Options().Addr; a != "FailoverClient" {
			p.Node = a
		}
		p.Mode, p.WaitReplicas, p.Note = decideMode(p, 1, false, false)
		return []Persistence{p}, nil
	default:
		return nil, fmt.Errorf("state: cannot probe a %T", c)
	}
}

// SentinelMaster asks the sentinels of a Sentinel URL which address the
// master has now.
func SentinelMaster(ctx context.Context, url string) (string, error) {
	o, err := ParseSentinelURL(url)
	if err != nil {
		return "", err
	}
	var last error
	for _, a := range o.SentinelAddrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, TLSConfig: o.TLSConfig, DialTimeout: 2 * time.Second})
		addr, err := sc.GetMasterAddrByName(ctx, o.MasterName).Result()
		_ = sc.Close()
		if err == nil && len(addr) == 2 {
			return addr[0] + ":" + addr[1], nil
		}
		last = fmt.Errorf("sentinel %s: %w", a, err)
	}
	return "", fmt.Errorf("no sentinel names master %s: %w", o.MasterName, last)
}
