package schema

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

// schemaGzip is a gzipped copy of botapi.json, the official Bot API schema
// (methods, fields, required, types); schema_test.go keeps the two in step.
//
//go:embed botapi.json.gz
var schemaGzip []byte

// Schema is a parsed Bot API schema. It is read-only once parsed and safe
// for concurrent use.
type Schema struct {
	// Version is the Bot API version the schema describes, e.g. "Bot API 10.1".
	Version string

	methods      map[string]*Method
	methodsLower map[string]string
	types        map[string]*typeDef
}

// Field is a parameter of a method or a field of a type.
type Field struct {
	Name        string   `json:"name"`
	Types       []string `json:"types"`
	Required    bool     `json:"required"`
	Description string   `json:"description"`
}

// Method is a Bot API method: its parameters and the types it may return.
type Method struct {
	// Name is the method's canonical name, e.g. "sendMessage".
	Name   string   `json:"name"`
	Fields []*Field `json:"fields"`
	// Returns are the type expressions of the result, e.g. ["Message", "Boolean"].
	Returns []string `json:"returns"`

	byName map[string]*Field
}

type typeDef struct {
	Name     string   `json:"name"`
	Fields   []*Field `json:"fields"`
	Subtypes []string `json:"subtypes"`

	byName map[string]*Field
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

// Embedded returns the Bot API schema embedded in the package, parsed
// once and shared (it is read-only).
func Embedded() (*Schema, error) {
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
		embeddedSchema, embeddedErr = Parse(data)
	})
	return embeddedSchema, embeddedErr
}

// Parse parses a Bot API schema in the botapi.json format
// ({version, methods{name: {fields, returns}}, types{name: {fields, subtypes}}}).
func Parse(data []byte) (*Schema, error) {
	var raw struct {
		Version string              `json:"version"`
		Methods map[string]*Method  `json:"methods"`
		Types   map[string]*typeDef `json:"types"`
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
		m.byName = make(map[string]*Field, len(m.Fields))
		for _, f := range m.Fields {
			m.byName[f.Name] = f
		}
		s.methodsLower[strings.ToLower(name)] = name
	}
	for name, t := range s.types {
		t.Name = name
		t.byName = make(map[string]*Field, len(t.Fields))
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

// Method looks a method up the way the Bot API does (names are
// case-insensitive); it is nil when the schema has no such method.
func (s *Schema) Method(name string) *Method {
	if m, ok := s.methods[name]; ok {
		return m
	}
	if canon, ok := s.methodsLower[strings.ToLower(name)]; ok {
		return s.methods[canon]
	}
	return nil
}

// HasMethod reports whether the schema defines the method (case-insensitive).
func (s *Schema) HasMethod(name string) bool { return s.Method(name) != nil }
