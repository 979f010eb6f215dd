package transport

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"

	"shopbot/reseller/internal/check"
)

// EncodeForm builds the multipart/form-data body of a chat message (held in
// memory so that an attempt can be repeated): a "body" part when body is not
// "", an "image" part when image is not nil (read fully, at most maxImage
// bytes, its media type sniffed when contentType is ""). It returns the body
// and its Content-Type.
func EncodeForm(body string, image io.Reader, imageName, contentType string, maxImage int) ([]byte, string, error) {
	var img []byte
	if image != nil {
		var err error
		img, err = io.ReadAll(io.LimitReader(image, int64(maxImage)+1))
		if err != nil {
			return nil, "", fmt.Errorf("reseller: reading chat image: %w", err)
		}
		if len(img) == 0 {
			return nil, "", check.Invalid("image", "is empty")
		}
		if len(img) > maxImage {
			return nil, "", check.Invalid("image", "is larger than %d bytes", maxImage)
		}
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if body != "" {
		if err := w.WriteField("body", body); err != nil {
			return nil, "", err
		}
	}
	if img != nil {
		name := strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, imageName)
		if name == "" {
			name = "image"
		}
		ct := contentType
		if ct == "" {
			ct = http.DetectContentType(img)
		} else if _, _, err := mime.ParseMediaType(ct); err != nil || strings.ContainsAny(ct, "\r\n") {
			return nil, "", check.Invalid("image_content_type", "is not a media type")
		}
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="image"; filename="%s"`, quoteEscaper.Replace(name)))
		h.Set("Content-Type", ct)
		part, err := w.CreatePart(h)
		if err != nil {
			return nil, "", err
		}
		if _, err := part.Write(img); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")
