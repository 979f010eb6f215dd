package bot

import "shopbot/bot/images"

// Product images (package images): a catalog screen with an image is shown
// as a photo with the screen's text as its caption (screen.go).

// ImageOptions turns product images on (Options.Images).
type ImageOptions = images.Options

// Defaults of ImageOptions.
const (
	DefaultImageTimeout   = images.DefaultTimeout
	DefaultImageBrokenFor = images.DefaultBrokenFor
)
