// Package golden compares what a test rendered (a conversation's
// transcript, a bot message as a person sees it) with a file kept under
// testdata/, the one golden-file helper of the shop's tests. With -update
// the test writes the file instead: go test ./<package> -run TestX -update.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check compares got with testdata/<name>.golden; with -update it writes
// the file instead.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update in this package creates it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update in this package rewrites it); got:\n%s", path, t.Name(), got)
	}
}
