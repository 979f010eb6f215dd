package transport

import (
	"net/netip"
	"testing"
)

func TestPublicAddr(t *testing.T) {
	for ip, want := range map[string]bool{
		"127.0.0.1": false, "169.254.169.254": false, "10.1.2.3": false, "192.168.1.1": false, "172.16.0.1": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "fe80::1": false, "fd00:ec2::254": false, "::ffff:127.0.0.1": false,
		"224.0.0.1": false, "93.184.216.34": true, "2606:4700::1111": true, "8.8.8.8": true,
	} {
		if got := publicAddr(netip.MustParseAddr(ip)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", ip, got, want)
		}
	}
}
