package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"syscall"
	"time"

	"shopbot/reseller/internal/check"
)

// MaxImageRedirects is how many redirects an image download follows; each
// target is checked like the first URL.
const MaxImageRedirects = 3

// publicAddr reports whether ip may be fetched from: not loopback, private
// (RFC 1918, unique local), link-local (169.254/16, where cloud metadata
// lives, and fe80::/10), multicast, unspecified, CGNAT (100.64/10) or an
// IPv4-mapped form of any of those.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range refusedPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 (may reach internal IPv4)
	netip.MustParsePrefix("fd00:ec2::/32"),  // AWS metadata over IPv6 (also ULA)
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("::ffff:0:0/96"),  // mapped, caught by Unmap, kept for clarity
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2002::/16"),      // 6to4 (may embed private IPv4)
	netip.MustParsePrefix("2001::/32"),      // Teredo (may embed private IPv4)
	netip.MustParsePrefix("169.254.0.0/16"), // link-local, explicit: metadata
	netip.MustParsePrefix("127.0.0.0/8"),    // loopback, explicit
	netip.MustParsePrefix("255.255.255.255/32"),
}

// hostPort returns u's lower-cased host and port, the scheme's default port
// when none is given.
func hostPort(u *url.URL) (host, port string) {
	host, port = strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return host, port
}

// imageHostAllowed reports whether u is on the API's host or a declared
// media host (and an http(s) URL at all).
func (t *Transport) imageHostAllowed(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil {
		return false
	}
	host, port := hostPort(u)
	if host == t.baseHost {
		return true
	}
	for _, h := range t.MediaHosts {
		if h == host || h == net.JoinHostPort(host, port) || (strings.HasPrefix(h, "[") && h == "["+host+"]") {
			return true
		}
	}
	return false
}

// imageClient returns the HTTP client for operator images: no proxy (its
// checks must see the real target), every dialled address checked after DNS
// resolution (so a media host resolving to 127.0.0.1 is refused), every
// redirect checked like the first URL, at most MaxImageRedirects.
//
// The one exception to the address check is the configured upstream itself:
// a connection to exactly the base URL's host and port is not checked, since
// that is where every API call already goes (in tests and local setups it is
// a loopback server). Another port of the same host (for example this
// process's metrics listener) is checked like any address.
func (t *Transport) imageClient() *http.Client {
	t.imageOnce.Do(func() {
		guarded := &net.Dialer{
			Timeout: 10 * time.Second,
			Control: func(network, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return fmt.Errorf("%w: unparsable address %q", ErrImageRefused, address)
				}
				if !t.addrAllowed(ap.Addr()) {
					return fmt.Errorf("%w: %s is not a public address", ErrImageRefused, ap.Addr())
				}
				return nil
			},
		}
		plain := &net.Dialer{Timeout: 10 * time.Second}
		tr := &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if strings.EqualFold(addr, t.baseAddr) {
					return plain.DialContext(ctx, network, addr)
				}
				return guarded.DialContext(ctx, network, addr)
			},
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 15 * time.Second,
			MaxIdleConns:          4,
			IdleConnTimeout:       30 * time.Second,
			ForceAttemptHTTP2:     true,
		}
		t.images = &http.Client{
			Transport: tr,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) > MaxImageRedirects {
					return fmt.Errorf("%w: more than %d redirects", ErrImageRefused, MaxImageRedirects)
				}
				if !t.imageHostAllowed(req.URL) {
					return fmt.Errorf("%w: redirect to %s", ErrImageRefused, req.URL.Redacted())
				}
				// The key goes only to the API's own scheme and host.
				if !t.isBaseOrigin(req.URL) {
					req.Header.Del("Authorization")
				}
				return nil
			},
		}
	})
	return t.images
}

// isBaseOrigin reports whether u has the base URL's scheme, host and port.
func (t *Transport) isBaseOrigin(u *url.URL) bool {
	host, port := hostPort(u)
	return strings.EqualFold(u.Scheme, t.baseScheme) && strings.EqualFold(net.JoinHostPort(host, port), t.baseAddr)
}

func (t *Transport) addrAllowed(ip netip.Addr) bool {
	if t.AllowAddr != nil {
		return t.AllowAddr(ip)
	}
	return publicAddr(ip)
}

// Image is an image fetched by DownloadImage.
type Image struct {
	Data        []byte
	ContentType string // the server's, or sniffed when it gave none or a generic one
	Name        string // last element of the URL's path ("image" when empty)
}

// DownloadImage fetches ref (an absolute http(s) URL, or a path relative to
// the base URL) with the guarded client, refusing one over limit bytes;
// route names it to the observer and in errors. The API key goes only to the
// base URL's own scheme and host. See reseller.Client.DownloadChatImage for
// the guards and the errors.
func (t *Transport) DownloadImage(ctx context.Context, ref string, limit int, route string) (*Image, error) {
	base, err := url.Parse(t.Base + "/")
	if err != nil {
		return nil, fmt.Errorf("reseller: base URL: %w", err)
	}
	ref = strings.TrimSpace(ref)
	u, err := base.Parse(ref)
	if ref == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, check.Invalid("image", "is not an http(s) URL or a path")
	}
	if !t.imageHostAllowed(u) {
		return nil, &check.ValidationError{Field: "image", Reason: "is not on the API's host or a declared media host", Err: ErrImageRefused}
	}
	actx, cancel := context.WithTimeout(ctx, t.ImageTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, check.Invalid("image", "is not a usable URL")
	}
	if t.isBaseOrigin(u) {
		req.Header.Set("Authorization", "Bearer "+t.APIKey)
	}
	req.Header.Set("User-Agent", t.UserAgent)
	start := t.Now()
	resp, err := t.imageClient().Do(req)
	if err != nil {
		t.observe(route, 0, t.Now().Sub(start))
		if errors.Is(err, ErrImageRefused) {
			return nil, &check.ValidationError{Field: "image", Reason: t.Redact(err.Error()), Err: ErrImageRefused}
		}
		return nil, t.RedactErr(fmt.Errorf("reseller: download image: %w", err))
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	t.observe(route, resp.StatusCode, t.Now().Sub(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, NewAPIError(route, resp.StatusCode, data, t.Redact)
	}
	if rerr != nil {
		return nil, t.RedactErr(fmt.Errorf("reseller: download image: %w", rerr))
	}
	if len(data) > limit {
		return nil, check.Invalid("image", "is larger than %d bytes", limit)
	}
	if len(data) == 0 {
		return nil, check.Invalid("image", "is empty")
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "" || ct == "application/octet-stream" {
		ct, _, _ = mime.ParseMediaType(http.DetectContentType(data))
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" || name == "" {
		name = "image"
	}
	return &Image{Data: data, ContentType: ct, Name: name}, nil
}
