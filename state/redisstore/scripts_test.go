package redisstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	scriptRe = regexp.MustCompile("(?s)redis\\.NewScript\\(`(.*?)`\\)")
	callRe   = regexp.MustCompile(`redis\.p?call\(\s*'([A-Za-z]+)'\s*,\s*([^,)]*)`)
	// keyless commands a script may call without naming a key.
	keyless = map[string]bool{"TIME": true}
)

// Every Lua script of the module (the Redis store and bot) names the key of every
// redis.call as KEYS[...]: no key is built from ARGV or inside the script,
// so Redis Cluster and Cluster-compatible proxies see every key a script
// touches. A script that does not fails here with its file and command.
func TestScriptsDeclareTheirKeys(t *testing.T) {
	scripts := 0
	for _, root := range []string{".", "../../bot"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range scriptRe.FindAllStringSubmatch(string(src), -1) {
				scripts++
				calls := callRe.FindAllStringSubmatch(m[1], -1)
				if len(calls) == 0 {
					t.Errorf("%s: a script with no redis.call the test can read:\n%s", path, m[1])
				}
				for _, c := range calls {
					cmd, arg := strings.ToUpper(c[1]), strings.TrimSpace(c[2])
					if keyless[cmd] {
						continue
					}
					if !regexp.MustCompile(`^KEYS\[[^\]]+\]$`).MatchString(arg) {
						t.Errorf("%s: %s on %q, not a declared KEYS[...] in:\n%s", path, cmd, arg, m[1])
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if scripts < 20 {
		t.Fatalf("found only %d scripts: is the pattern still right?", scripts)
	}
}
