package reseller

import (
	"time"

	"shopbot/reseller/internal/transport"
)

// Bounds of DownloadChatImage.
const (
	// MaxChatImageRedirects is how many redirects an image download follows;
	// each target is checked like the first URL.
	MaxChatImageRedirects = transport.MaxImageRedirects
	// DefaultChatImageTimeout bounds one image download, redirects and body
	// included, unless WithImageTimeout is given.
	DefaultChatImageTimeout = transport.DefaultImageTimeout
)

// ErrImageRefused is wrapped by the *ValidationError DownloadChatImage
// returns for an image URL it will not fetch: a host that is neither the
// API's own nor a declared media host, or an address that is loopback,
// private, link-local (cloud metadata included), multicast or unspecified.
var ErrImageRefused = transport.ErrImageRefused

// WithMediaHosts declares the hosts, besides the base URL's own, that
// operator images may be fetched from (for example a CDN the upstream puts
// chat files on). Each entry is a host name or IP literal, optionally with
// ":port" (then only that port). Whatever the host, the address it resolves
// to must be public: see DownloadChatImage.
func WithMediaHosts(hosts ...string) Option { return transport.WithMediaHosts(hosts...) }

// WithImageTimeout bounds one image download, redirects and body included
// (default DefaultChatImageTimeout).
func WithImageTimeout(d time.Duration) Option { return transport.WithImageTimeout(d) }
