package work

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ImageIDTTL is how long the file_id of an uploaded product image is kept
// after the upload: an image no screen showed for that long is uploaded
// again the next time.
const ImageIDTTL = 30 * 24 * time.Hour

// Images remembers, for each product image URL, what every replica needs
// to know before showing it: the Telegram file_id it was uploaded as (so
// an image is uploaded once, then sent by file_id), or that it could not be
// had (so a broken URL is not fetched again on every screen). One key per
// URL, `<prefix>img:<hash of the URL>`, holding "id:<file_id>" for
// ImageIDTTL or "bad" for the broken period.
type Images struct {
	rdb redis.UniversalClient
	p   string
}

// NewImages returns the image store under prefix.
func NewImages(rdb redis.UniversalClient, prefix string) *Images {
	return &Images{rdb: rdb, p: prefix}
}

// ImageKey is the short hash that stands for an image URL in keys and
// sessions.
func ImageKey(url string) string {
	h := sha256.Sum256([]byte(url))
	return hex.EncodeToString(h[:16])
}

func (im *Images) key(url string) string { return im.p + "img:" + ImageKey(url) }

// Lookup returns the file_id url was uploaded as, or broken when it is
// marked broken; both zero when nothing is known.
func (im *Images) Lookup(ctx context.Context, url string) (fileID string, broken bool, err error) {
	v, err := im.rdb.Get(ctx, im.key(url)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, err
	case v == "bad":
		return "", true, nil
	}
	id, _ := strings.CutPrefix(v, "id:")
	return id, false, nil
}

// Remember records the file_id url was uploaded as.
func (im *Images) Remember(ctx context.Context, url, fileID string) error {
	return im.rdb.Set(ctx, im.key(url), "id:"+fileID, ImageIDTTL).Err()
}

// MarkBroken records that url could not be shown, for ttl; a file_id
// another replica recorded meanwhile is kept.
func (im *Images) MarkBroken(ctx context.Context, url string, ttl time.Duration) error {
	err := im.rdb.SetArgs(ctx, im.key(url), "bad", redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	if errors.Is(err, redis.Nil) {
		return nil // a file_id (or a mark) is there already
	}
	return err
}

// Forget drops the file_id url was uploaded as, when it is still fileID
// (Telegram refused it), so the next show uploads the image again.
func (im *Images) Forget(ctx context.Context, url, fileID string) error {
	return forgetImageScript.Run(ctx, im.rdb, []string{im.key(url)}, "id:"+fileID).Err()
}

var forgetImageScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`)

// The Mini App shows the catalog's images through the shop itself, by their
// key (ImageKey), never by the upstream's URL: the URL of a key the app
// listed is kept under `<prefix>imgurl:<key>` for WebNameTTL, so whichever
// replica a browser asks finds it, and only a URL the catalog listed can
// be fetched through the shop.

// WebNameTTL is how long the URL of an image the Mini App listed is kept.
const WebNameTTL = 7 * 24 * time.Hour

func (im *Images) nameKey(key string) string { return im.p + "imgurl:" + key }

// Name records the URLs the Mini App listed by their keys, for ttl, in one
// round trip.
func (im *Images) Name(ctx context.Context, urls []string, ttl time.Duration) error {
	if len(urls) == 0 {
		return nil
	}
	_, err := im.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, u := range urls {
			p.Set(ctx, im.nameKey(ImageKey(u)), u, ttl)
		}
		return nil
	})
	return err
}

// URLOf returns the URL recorded under key, or "" when none is.
func (im *Images) URLOf(ctx context.Context, key string) (string, error) {
	u, err := im.rdb.Get(ctx, im.nameKey(key)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return u, err
}
