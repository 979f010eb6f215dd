package resellersim

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/internal/wire"
	"shopbot/reseller/resellersim/simcatalog"
)

// PathPrefix is the path prefix under which a Sim serves the API.
const PathPrefix = wire.PathPrefix

const (
	maxBodyBytes  = 6 << 20 // JSON bodies and chat uploads
	maxImageBytes = 5 << 20
)

// handler serves one endpoint with the Sim's lock held.
type handler func(s *Sim, q *wire.Request) (any, error)

// route is a resolved endpoint.
type route struct {
	h         handler
	forbidden bool // answers 403 when the account is blocked
	create    bool // creates an order
}

// ServeHTTP serves the API under PathPrefix.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		wire.WriteError(w, http.StatusBadRequest, "invalid_request", "reading the request body: "+err.Error())
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rel, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok || (rel != "" && rel[0] != '/') {
		wire.WriteError(w, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	rt, found := match(r.Method, segs)

	s.mu.Lock()
	hook := s.onRequest
	var step faults.CreateStep
	var scripted bool
	if rt.create {
		s.creates++
		step, scripted = s.faults.TakeCreateStep()
	}
	delay := s.faults.TakeDelay(rel)
	var failStatus int
	if !scripted { // a scripted step is the whole fault of its create
		failStatus = s.faults.TakeFail(rel)
	}
	s.mu.Unlock()

	if hook != nil {
		hook(r, body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	if failStatus != 0 {
		if failStatus == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		wire.WriteError(w, failStatus, wire.ErrorType(failStatus), "injected failure")
		return
	}
	if scripted && step.Answer() == faults.AnswerGateway {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(step.Status())
		_, _ = io.WriteString(w, "<html><body><h1>"+strconv.Itoa(step.Status())+" "+http.StatusText(step.Status())+"</h1></body></html>\n")
		if found && s.authorized(r) {
			go s.lateCreate(rt, r.Clone(context.WithoutCancel(r.Context())), segs, body, step.Late())
		}
		return
	}
	if scripted && !step.Creates() {
		s.answerStep(w, r, step, "injected failure before the order was created")
		return
	}
	if len(segs) == 2 && segs[0] == "chat-files" && r.Method == http.MethodGet {
		s.serveFile(w, segs[1])
		return
	}
	if name, ok := strings.CutPrefix(rel, ImagesPath); ok && r.Method == http.MethodGet {
		s.serveImage(w, r, name)
		return
	}
	if len(body) > maxBodyBytes {
		wire.WriteError(w, http.StatusBadRequest, "invalid_request", "request body too large")
		return
	}
	if !s.authorized(r) {
		wire.WriteError(w, http.StatusUnauthorized, "unauthorized", "API key missing or invalid")
		return
	}

	s.mu.Lock()
	now := s.clock()
	if lim := s.faults.RateCheck(now, s.rateLimit, s.rateWindow, w.Header()); lim != nil {
		s.mu.Unlock()
		wire.WriteError(w, http.StatusTooManyRequests, "rate_limited", lim.Msg)
		return
	}
	if !found {
		s.mu.Unlock()
		wire.WriteError(w, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	if rt.forbidden && s.status == StatusBlocked {
		s.mu.Unlock()
		wire.WriteError(w, http.StatusForbidden, "forbidden", "account suspended")
		return
	}
	s.advanceLocked(now)
	q := &wire.Request{R: r, Path: segs, Body: body, Now: now, Query: r.URL.Query()}
	res, herr := rt.h(s, q)
	var cut bool
	var failAfter int
	if herr == nil && rt.create && !scripted {
		cut, failAfter = s.faults.TakeAfterCreate()
	}
	created, onCreated := s.createdLocked(herr == nil && rt.create)
	s.mu.Unlock()
	if created != nil && onCreated != nil {
		onCreated(*created)
	}
	if herr == nil && scripted && step.Answer() != faults.AnswerNormal {
		s.answerStep(w, r, step, "injected failure after the order was created")
		return
	}

	if herr != nil {
		var ae *wire.APIError
		if !errors.As(herr, &ae) {
			ae = &wire.APIError{Status: http.StatusInternalServerError, Type: "server_error", Msg: herr.Error()}
		}
		wire.WriteError(w, ae.Status, ae.Type, ae.Msg)
		return
	}
	if cut {
		cutConnection(w)
		return
	}
	if failAfter != 0 {
		wire.WriteError(w, failAfter, wire.ErrorType(failAfter), "injected failure after the order was created")
		return
	}
	if res, ok := res.(rendered); ok {
		wire.WriteJSON(w, http.StatusOK, res.Render(r))
		return
	}
	wire.WriteJSON(w, http.StatusOK, res)
}

// createdLocked returns a copy of the order a create just stored and the
// creation hook, when ok and there is a hook.
func (s *Sim) createdLocked(ok bool) (*OrderSnapshot, func(OrderSnapshot)) {
	if !ok || s.onCreated == nil || len(s.orders) == 0 {
		return nil, nil
	}
	o := s.orders[len(s.orders)-1].clone()
	return &o, s.onCreated
}

// answerStep gives the answer of a scripted create step other than the
// normal one.
func (s *Sim) answerStep(w http.ResponseWriter, r *http.Request, st faults.CreateStep, msg string) {
	switch st.Answer() {
	case faults.AnswerStatus:
		if st.Status() == http.StatusTooManyRequests {
			ae := faults.ForcedRateLimit(s.clock(), s.rateLimit, st.RetryAfter(), w.Header())
			wire.WriteError(w, ae.Status, ae.Type, ae.Msg)
			return
		}
		wire.WriteError(w, st.Status(), wire.ErrorType(st.Status()), msg)
	case faults.AnswerCut:
		cutConnection(w)
	case faults.AnswerHang:
		<-r.Context().Done() // the client gave up: no answer
	}
}

// rendered is a result that needs the request to render (absolute URLs).
type rendered interface {
	Render(r *http.Request) any
}

// cutConnection closes the client connection without an answer.
func cutConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (s *Sim) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(auth, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && key == s.apiKey
}

// match resolves an endpoint from the method and path segments.
func match(method string, p []string) (route, bool) {
	get, post := method == http.MethodGet, method == http.MethodPost
	n := len(p)
	at := func(i int, v string) bool { return i < n && p[i] == v }
	switch {
	case get && n == 1 && at(0, "me"):
		return route{h: (*Sim).getMe, forbidden: true}, true
	case get && n == 1 && at(0, "transactions"):
		return route{h: (*Sim).listTransactions, forbidden: true}, true
	case get && n == 2 && at(0, "transactions"):
		return route{h: (*Sim).getTransaction, forbidden: true}, true
	case get && n == 1 && at(0, "orders"):
		return route{h: (*Sim).listOrders}, true
	case get && n == 2 && at(0, "orders"):
		return route{h: (*Sim).getOrder}, true
	case get && n == 3 && at(0, "orders") && at(2, "chat"):
		return route{h: (*Sim).getChat}, true
	case post && n == 3 && at(0, "orders") && at(2, "chat"):
		return route{h: (*Sim).postChat}, true

	case post && n == 2 && at(0, "store-topup") && at(1, "check-login"):
		return route{h: (*Sim).checkLogin}, true
	case post && n == 2 && at(0, "store-topup") && at(1, "order"):
		return route{h: (*Sim).orderStoreTopup, forbidden: true, create: true}, true
	case get && n == 2 && at(0, "store-topup") && at(1, "rates"):
		return route{h: catalogRoute((*simcatalog.Store).GetRates)}, true

	case get && n == 2 && at(0, "messenger") && at(1, "stars"):
		return route{h: catalogRoute((*simcatalog.Store).GetStars)}, true
	case post && n == 3 && at(0, "messenger") && at(1, "stars") && at(2, "buy"):
		return route{h: (*Sim).orderStars, forbidden: true, create: true}, true
	case get && n == 2 && at(0, "messenger") && at(1, "premium"):
		return route{h: catalogRoute((*simcatalog.Store).GetPremium)}, true
	case post && n == 3 && at(0, "messenger") && at(1, "premium") && at(2, "buy"):
		return route{h: (*Sim).orderPremium, forbidden: true, create: true}, true

	case get && n == 1 && at(0, "manual-services"):
		return route{h: catalogRoute((*simcatalog.Store).ListManualServices)}, true
	case get && n == 3 && at(0, "manual-services") && at(2, "offers"):
		return route{h: catalogRoute((*simcatalog.Store).GetManualOffers)}, true
	case post && n == 2 && at(0, "manual-services") && at(1, "order"):
		return route{h: (*Sim).orderManual, forbidden: true, create: true}, true

	case get && n == 2 && at(0, "store-gifts") && at(1, "games"):
		return route{h: catalogRoute((*simcatalog.Store).ListStoreGames)}, true
	case get && n == 3 && at(0, "store-gifts") && at(1, "games"):
		return route{h: catalogRoute((*simcatalog.Store).GetStoreGame)}, true
	case post && n == 2 && at(0, "store-gifts") && at(1, "order"):
		return route{h: (*Sim).orderStoreGift, forbidden: true, create: true}, true

	case get && n == 2 && at(0, "gift-cards") && at(1, "categories"):
		return route{h: catalogRoute((*simcatalog.Store).ListGiftCategories)}, true
	case get && n == 4 && at(0, "gift-cards") && at(1, "categories") && at(3, "cards"):
		return route{h: catalogRoute((*simcatalog.Store).GetGiftCards)}, true
	case get && n == 2 && at(0, "gift-cards") && at(1, "brands"):
		return route{h: catalogRoute((*simcatalog.Store).ListGiftBrands)}, true
	case post && n == 2 && at(0, "gift-cards") && at(1, "order"):
		return route{h: (*Sim).orderGiftCard, forbidden: true, create: true}, true

	case get && n == 1 && at(0, "game-keys"):
		return route{h: catalogRoute((*simcatalog.Store).ListGames)}, true
	case get && n == 3 && at(0, "game-keys") && at(2, "keys"):
		return route{h: catalogRoute((*simcatalog.Store).GetGameKeys)}, true
	case get && n == 3 && at(0, "game-keys") && at(2, "region-restriction"):
		return route{h: catalogRoute((*simcatalog.Store).GetRegionRestriction)}, true
	case post && n == 2 && at(0, "game-keys") && at(1, "order"):
		return route{h: (*Sim).orderGameKey, forbidden: true, create: true}, true

	case get && n == 2 && at(0, "top-ups") && at(1, "categories"):
		return route{h: catalogRoute((*simcatalog.Store).ListTopUpCategories)}, true
	case get && n == 4 && at(0, "top-ups") && at(1, "categories") && at(3, "offers"):
		return route{h: catalogRoute((*simcatalog.Store).GetTopUpOffers)}, true
	case get && n == 2 && at(0, "top-ups") && at(1, "brands"):
		return route{h: catalogRoute((*simcatalog.Store).ListTopUpBrands)}, true
	case post && n == 2 && at(0, "top-ups") && at(1, "order"):
		return route{h: (*Sim).orderTopUp, forbidden: true, create: true}, true
	}
	return route{}, false
}

// lateCreate executes an order-creating request after late, as the service
// behind a gateway that already answered with its own error does.
func (s *Sim) lateCreate(rt route, r *http.Request, segs []string, body []byte, late time.Duration) {
	time.Sleep(late) // the service's own time: nothing waits on it
	s.mu.Lock()
	now := s.clock()
	s.advanceLocked(now)
	q := &wire.Request{R: r, Path: segs, Body: body, Now: now, Query: r.URL.Query()}
	_, herr := rt.h(s, q)
	created, onCreated := s.createdLocked(herr == nil)
	s.lateCreates++
	s.mu.Unlock()
	if created != nil && onCreated != nil {
		onCreated(*created)
	}
}

// LateCreates counts the creates executed after a gateway's answer
// (faults.GatewayThenCreated), done or refused.
func (s *Sim) LateCreates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lateCreates
}
