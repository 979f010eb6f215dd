package resellersim

import (
	"bytes"
	"net/http"
	"regexp"
	"strconv"
)

// chargedRE is a charged_usd field of an answer's JSON.
var chargedRE = regexp.MustCompile(`"charged_usd"\s*:\s*"[^"]*"`)

// ReportCharged wraps h (a Sim) so that every charged_usd in its answers
// reads charged: an upstream that reports an impossible cost (negative,
// or far above the price it quoted) while taking the real one.
func ReportCharged(h http.Handler, charged string) http.Handler {
	field := []byte(`"charged_usd":` + strconv.Quote(charged))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		body := chargedRE.ReplaceAll(rec.body.Bytes(), field)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
	})
}

// recorder keeps an answer to rewrite it.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
