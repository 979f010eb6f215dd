package calls

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"

	"shopbot/bot/botapitest/schema"
)

// maxBody bounds a request body (Telegram's upload limit is 50 MB).
const maxBody = 50 << 20

// Read collects the parameters of a request from the query string and a
// JSON, urlencoded or multipart body, as they arrived (see schema.Param),
// and its uploaded file parts by form field name. A body over 50 MB
// (Telegram's upload limit) is an error.
func Read(r *http.Request) (map[string]schema.Param, map[string]File, error) {
	params := map[string]schema.Param{}
	files := map[string]File{}
	for k, vs := range r.URL.Query() {
		params[k] = schema.Param{Kind: schema.Text, Text: vs[len(vs)-1]}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxBody {
		return nil, nil, fmt.Errorf("body larger than %d bytes", maxBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return params, files, nil
	}
	ct := r.Header.Get("Content-Type")
	mt, mparams, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, nil, fmt.Errorf("content type %q: %w", ct, err)
	}
	switch mt {
	case "application/json":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, nil, fmt.Errorf("JSON body must be an object: %w", err)
		}
		for k, raw := range obj {
			raw = bytes.TrimSpace(raw)
			if len(raw) > 0 && raw[0] == '"' {
				var str string
				if err := json.Unmarshal(raw, &str); err != nil {
					return nil, nil, fmt.Errorf("field %s: %w", k, err)
				}
				params[k] = schema.Param{Kind: schema.Text, Text: str}
				continue
			}
			params[k] = schema.Param{Kind: schema.JSON, Text: string(raw)}
		}
	case "application/x-www-form-urlencoded":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, nil, fmt.Errorf("urlencoded body: %w", err)
		}
		for k, vs := range vals {
			params[k] = schema.Param{Kind: schema.Text, Text: vs[len(vs)-1]}
		}
	case "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(body), mparams["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, nil, fmt.Errorf("multipart body: %w", err)
			}
			data, err := io.ReadAll(part)
			if err != nil {
				return nil, nil, fmt.Errorf("multipart part %s: %w", part.FormName(), err)
			}
			name := part.FormName()
			if fn := part.FileName(); fn != "" {
				f := File{Name: fn, Data: data}
				files[name] = f
				params[name] = schema.Param{Kind: schema.Upload}
				continue
			}
			params[name] = schema.Param{Kind: schema.Text, Text: string(data)}
		}
	default:
		return nil, nil, fmt.Errorf("unsupported content type %q", mt)
	}
	return params, files, nil
}
