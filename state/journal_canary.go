package state

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The journal's directory also remembers the lost-writes canary
// (redisstore.Canary): the counters' values this shop's processes last saw.
// A process that starts on a Redis whose counters are below them knows
// the store lost writes while nobody watched (a restore from a backup with
// every replica down), which the canary alone cannot tell a process that
// has seen nothing yet. Each process keeps its own file,
// canary-<process>.json, written every second it runs; a reader takes the
// highest value of each counter over the files of the bound shop. A file
// nobody wrote for canaryFileKeep is removed.

const canaryFileKeep = 90 * 24 * time.Hour

// canaryFile is one process's record of the counters it saw.
type canaryFile struct {
	Shop     JournalShop      `json:"shop"`
	At       time.Time        `json:"at"`
	Counters map[string]int64 `json:"counters"`
}

// NoteCanary records the canary's counters as this process last saw them.
// A journal in memory keeps nothing.
func (j *Journal) NoteCanary(counters map[string]int64) error {
	if j == nil || j.dir == "" || len(counters) == 0 {
		return nil
	}
	j.mu.Lock()
	if j.canaryName == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		j.canaryName = fmt.Sprintf("canary-%d-%s.json", os.Getpid(), hex.EncodeToString(b[:]))
	}
	rec := canaryFile{Shop: j.shop, At: j.now().UTC(), Counters: counters}
	name := j.canaryName
	j.mu.Unlock()
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := filepath.Join(j.dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("journal: note the canary: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(j.dir, name)); err != nil {
		return fmt.Errorf("journal: note the canary: %w", err)
	}
	return nil
}

// LastCanary returns the highest value of each canary counter this shop's
// processes recorded (none for a journal in memory).
func (j *Journal) LastCanary() (map[string]int64, error) {
	out := map[string]int64{}
	if j == nil || j.dir == "" {
		return out, nil
	}
	shop := j.Shop()
	names, err := filepath.Glob(filepath.Join(j.dir, "canary-*.json"))
	if err != nil {
		return out, err
	}
	for _, path := range names {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // removed meanwhile
		}
		var rec canaryFile
		if json.Unmarshal(data, &rec) != nil || rec.Shop != shop {
			continue
		}
		if j.now().Sub(rec.At) > canaryFileKeep && !strings.HasSuffix(path, j.canaryNameLocked()) {
			_ = os.Remove(path)
			continue
		}
		for k, v := range rec.Counters {
			out[k] = max(out[k], v)
		}
	}
	return out, nil
}

func (j *Journal) canaryNameLocked() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.canaryName == "" {
		return "\x00" // matches no path
	}
	return j.canaryName
}
