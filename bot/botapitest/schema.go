package botapitest

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
)

// schemaGzip is a gzipped copy of /work/shared/telegram/botapi.json, the
// official Bot API schema; schema_test.go keeps the two in step.
//
//go:embed botapi.json.gz
var schemaGzip []byte

// Schema is the parsed Bot API schema the server checks requests against.
type Schema struct {
	// Version is the Bot API version the schema describes, e.g. "Bot API 10.1".
	Version string

	methods      map[string]*methodDef
	methodsLower map[string]string
	types        map[string]*typeDef
}

type fieldDef struct {
	Name        string   `json:"name"`
	Types       []string `json:"types"`
	Required    bool     `json:"required"`
	Description string   `json:"description"`
}

type methodDef struct {
	Name    string      `json:"name"`
	Fields  []*fieldDef `json:"fields"`
	Returns []string    `json:"returns"`

	byName map[string]*fieldDef
}

type typeDef struct {
	Name     string      `json:"name"`
	Fields   []*fieldDef `json:"fields"`
	Subtypes []string    `json:"subtypes"`

	byName map[string]*fieldDef
	// discField and discValue identify a subtype by a constant field, e.g.
	// BotCommandScopeChat has type "chat"; both are empty when the type has
	// no discriminator.
	discField, discValue string
}

var (
	discAlways = regexp.MustCompile(`always "([^"]+)"`)
	discMustBe = regexp.MustCompile(`must be ([a-z_]+)`)
)

var (
	embeddedOnce   sync.Once
	embeddedSchema *Schema
	embeddedErr    error
)

// EmbeddedSchema returns the Bot API schema embedded in the package, parsed
// once and shared (it is read-only).
func EmbeddedSchema() (*Schema, error) {
	embeddedOnce.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(schemaGzip))
		if err != nil {
			embeddedErr = fmt.Errorf("open embedded schema: %w", err)
			return
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			embeddedErr = fmt.Errorf("read embedded schema: %w", err)
			return
		}
		embeddedSchema, embeddedErr = ParseSchema(data)
	})
	return embeddedSchema, embeddedErr
}

// ParseSchema parses a Bot API schema in the botapi.json format
// ({version, methods{name: {fields, returns}}, types{name: {fields, subtypes}}}).
func ParseSchema(data []byte) (*Schema, error) {
	var raw struct {
		Version string                `json:"version"`
		Methods map[string]*methodDef `json:"methods"`
		Types   map[string]*typeDef   `json:"types"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse bot api schema: %w", err)
	}
	if len(raw.Methods) == 0 || len(raw.Types) == 0 {
		return nil, fmt.Errorf("parse bot api schema: no methods or types")
	}
	s := &Schema{
		Version:      raw.Version,
		methods:      raw.Methods,
		methodsLower: make(map[string]string, len(raw.Methods)),
		types:        raw.Types,
	}
	for name, m := range s.methods {
		m.Name = name
		m.byName = make(map[string]*fieldDef, len(m.Fields))
		for _, f := range m.Fields {
			m.byName[f.Name] = f
		}
		s.methodsLower[strings.ToLower(name)] = name
	}
	for name, t := range s.types {
		t.Name = name
		t.byName = make(map[string]*fieldDef, len(t.Fields))
		for _, f := range t.Fields {
			t.byName[f.Name] = f
		}
		for _, f := range t.Fields {
			if f.Name != "type" && f.Name != "status" && f.Name != "source" {
				continue
			}
			if m := discAlways.FindStringSubmatch(f.Description); m != nil {
				t.discField, t.discValue = f.Name, m[1]
			} else if m := discMustBe.FindStringSubmatch(f.Description); m != nil {
				t.discField, t.discValue = f.Name, m[1]
			}
			break
		}
	}
	return s, nil
}

// method looks a method up the way the Bot API does: names are
// case-insensitive.
func (s *Schema) method(name string) *methodDef {
	if m, ok := s.methods[name]; ok {
		return m
	}
	if canon, ok := s.methodsLower[strings.ToLower(name)]; ok {
		return s.methods[canon]
	}
	return nil
}

// HasMethod reports whether the schema defines the method (case-insensitive).
func (s *Schema) HasMethod(name string) bool { return s.method(name) != nil }
