package main

import (
	"strings"
	"testing"
)

// SHOW_IMAGES is on unless set false; anything else names the variable.
func TestConfigShowImages(t *testing.T) {
	c, err := LoadConfig(env(nil), false)
	if err != nil || !c.ShowImages {
		t.Fatalf("default: %v, %v", c.ShowImages, err)
	}
	for _, v := range []string{"false", "FALSE", "0", "off", "no"} {
		if c, err := LoadConfig(env(map[string]string{"SHOW_IMAGES": v}), false); err != nil || c.ShowImages {
			t.Fatalf("SHOW_IMAGES=%s: %v, %v", v, c.ShowImages, err)
		}
	}
	if c, err := LoadConfig(env(map[string]string{"SHOW_IMAGES": "true"}), false); err != nil || !c.ShowImages {
		t.Fatalf("SHOW_IMAGES=true: %v, %v", c.ShowImages, err)
	}
	if _, err := LoadConfig(env(map[string]string{"SHOW_IMAGES": "sometimes"}), false); err == nil || !strings.Contains(err.Error(), "SHOW_IMAGES") {
		t.Fatalf("a bad value: %v", err)
	}
}
