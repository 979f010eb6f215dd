package state

import (
	"errors"
	"fmt"
)

// Replicas of two builds run side by side while the shop is upgraded
// (docs/design.md, "Version skew"). What one build writes that another may
// read is versioned, so that a build never mishandles what it does not
// understand:
//
//   - the build speaks a schema generation (SchemaGen) and names the oldest
//     generation it may run beside (MinPeerGen); a replica registers both
//     in Redis (redisstore.Replicas), and one whose generation another live
//     replica does not accept, or that does not accept theirs, refuses to
//     start (redisstore.Compatible);
//   - each kind of record another build may meet carries its version
//     (OrderVersion, TopupVersion, QuoteVersion, JournalVersion; the
//     conversation's is flows.SessionVersion). A record of a newer version
//     than the build reads is left alone, never rewritten, refunded or
//     reset: its work goes to a replica that reads it (ErrRecordTooNew);
//   - a job kind the build does not know is not claimed, and a job whose
//     record it cannot read is handed on to a newer generation
//     (sched.Known, jobs.LeaveForNewer).
//
// A change to any stored format, job kind or payment kind raises SchemaGen
// and the version of the records it changes. A change that older builds
// would mishandle even so (a record they would read as missing, a field
// whose meaning changes) also raises MinPeerGen to the new generation: that
// upgrade then cannot be rolling, and the new build refuses to start while
// an older one runs.

// SchemaGen is the schema generation this build speaks: what it writes
// (the versions below) and every job and payment kind it runs.
const SchemaGen = schemaGen

// MinPeerGen is the oldest schema generation a replica running beside this
// build may speak. Builds from before generations were registered count as
// generation 0.
const MinPeerGen = minPeerGen

// Record versions this build writes, and the newest it reads: a record of a
// higher version was written by a newer build and is left to one. A record
// without a version is version 1 (or 0: both read as the layout from before
// versions).
const (
	// OrderVersion is the version of the order document (Order.V).
	OrderVersion = 1
	// TopupVersion is the version of a wallet top-up record (WalletTopup.V).
	TopupVersion = topupVersion
	// QuoteVersion is the version of a stored quote.
	QuoteVersion = 1
	// JournalVersion is the version of a journal entry (JournalEntry.V).
	JournalVersion = 1
)

// ErrRecordTooNew means a record was written by a newer build, in a version
// this one does not read: nothing was changed, and the record's work is
// left to a replica that reads it.
var ErrRecordTooNew = errors.New("record of a newer version")

// TooNew returns ErrRecordTooNew, naming what, when version v is newer than
// newest; nil otherwise.
func TooNew(what string, v, newest int) error {
	if v > newest {
		return fmt.Errorf("%s: version %d, this build reads up to %d: %w", what, v, newest, ErrRecordTooNew)
	}
	return nil
}
