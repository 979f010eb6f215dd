package reseller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Bounds of DownloadChatImage.
const (
	// MaxChatImageRedirects is how many redirects an image download follows;
	// each target is checked like the first URL.
	MaxChatImageRedirects = 3
	// DefaultChatImageTimeout bounds one image download, redirects and body
	// included, unless WithImageTimeout is given.
	DefaultChatImageTimeout = 20 * time.Second
)

// ErrImageRefused is wrapped by the *ValidationError DownloadChatImage
// returns for an image URL it will not fetch: a host that is neither the
// API's own nor a declared media host, or an address that is loopback,
// private, link-local (cloud metadata included), multicast or unspecified.
var ErrImageRefused = errors.New("image host refused")

// WithMediaHosts declares the hosts, besides the base URL's own, that
// operator images may be fetched from (for example a CDN the upstream puts
// chat files on). Each entry is a host name or IP literal, optionally with
// ":port" (then only that port). Whatever the host, the address it resolves
// to must be public: see DownloadChatImage.
func WithMediaHosts(hosts ...string) Option {
	return func(c *Client) error {
		for _, h := range hosts {
			h = strings.ToLower(strings.TrimSpace(h))
			if h == "" {
				continue
			}
			if strings.ContainsAny(h, "/?#@ ") {
				return fmt.Errorf("reseller: WithMediaHosts: %q is not a host or host:port", h)
			}
			c.mediaHosts = append(c.mediaHosts, h)
		}
		return nil
	}
}

// WithImageTimeout bounds one image download, redirects and body included
// (default DefaultChatImageTimeout).
func WithImageTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return errors.New("reseller: WithImageTimeout: timeout must be positive")
		}
		c.imageTimeout = d
		return nil
	}
}

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
func (c *Client) imageHostAllowed(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil {
		return false
	}
	host, port := hostPort(u)
	if host == c.baseHost {
		return true
	}
	for _, h := range c.mediaHosts {
		if h == host || h == net.JoinHostPort(host, port) || (strings.HasPrefix(h, "[") && h == "["+host+"]") {
			return true
		}
	}
	return false
}

// imageClient returns the HTTP client for operator images: no proxy (its
// checks must see the real target), every dialled address checked after DNS
// resolution (so a media host resolving to 127.0.0.1 is refused), every
// redirect checked like the first URL, at most MaxChatImageRedirects.
//
// The one exception to the address check is the configured upstream itself:
// a connection to exactly the base URL's host and port is not checked, since
// that is where every API call already goes (in tests and local setups it is
// a loopback server). Another port of the same host (for example this
// process's metrics listener) is checked like any address.
func (c *Client) imageClient() *http.Client {
	c.imageOnce.Do(func() {
		guarded := &net.Dialer{
			Timeout: 10 * time.Second,
			Control: func(network, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return fmt.Errorf("%w: unparsable address %q", ErrImageRefused, address)
				}
				if !c.addrAllowed(ap.Addr()) {
					return fmt.Errorf("%w: %s is not a public address", ErrImageRefused, ap.Addr())
				}
				return nil
			},
		}
		plain := &net.Dialer{Timeout: 10 * time.Second}
		tr := &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if strings.EqualFold(addr, c.baseAddr) {
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
		c.images = &http.Client{
			Transport: tr,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) > MaxChatImageRedirects {
					return fmt.Errorf("%w: more than %d redirects", ErrImageRefused, MaxChatImageRedirects)
				}
				if !c.imageHostAllowed(req.URL) {
					return fmt.Errorf("%w: redirect to %s", ErrImageRefused, req.URL.Redacted())
				}
				// The key goes only to the API's own scheme and host.
				if !c.isBaseOrigin(req.URL) {
					req.Header.Del("Authorization")
				}
				return nil
			},
		}
	})
	return c.images
}

// isBaseOrigin reports whether u has the base URL's scheme, host and port.
func (c *Client) isBaseOrigin(u *url.URL) bool {
	host, port := hostPort(u)
	return strings.EqualFold(u.Scheme, c.baseScheme) && strings.EqualFold(net.JoinHostPort(host, port), c.baseAddr)
}

func (c *Client) addrAllowed(ip netip.Addr) bool {
	if c.allowAddr != nil {
		return c.allowAddr(ip)
	}
	return publicAddr(ip)
}
