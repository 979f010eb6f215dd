package schema

import "encoding/json"

// CheckCall checks the top-level parameters of a call of m: unknown
// parameters, missing required ones and wrong types, recursively through
// nested objects and arrays, then, when the types are right, the value
// rules (rules.go). uploads names the request's uploaded file parts, which
// attach://<name> may refer to. It returns the parameters decoded (Integer
// as int64, Float as float64, Boolean as bool, objects and arrays as
// encoding/json decodes them into any; uploads left out) and every
// violation found, none when the call is valid.
func (s *Schema) CheckCall(m *Method, params map[string]Param, uploads map[string]bool) (map[string]any, []*Violation) {
	c := &checker{s: s, uploads: uploads}
	decoded, probs := c.checkRequest(m, params)
	if len(probs) == 0 {
		probs = methodRules(m.Name, decoded)
	}
	return decoded, toViolations(m.Name, probs)
}

// CheckJSON checks one JSON value (a result, an update) against type
// expressions such as "Update" or "Array of Message"; it passes if it fits
// any of them. what names the value in the violations. The error is for
// data that is not one JSON value.
func (s *Schema) CheckJSON(what string, data []byte, exprs ...string) ([]*Violation, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	c := &checker{s: s}
	return toViolations(what, c.union("", v, exprs)), nil
}

// Value returns the parameter as a call to an unknown method records it:
// JSON decoded (numbers as float64), text as it is.
func (p Param) Value() any { return decodeUnknown(p) }

func toViolations(method string, ps []problem) []*Violation {
	vs := make([]*Violation, 0, len(ps))
	for _, p := range ps {
		vs = append(vs, &Violation{Method: method, Field: p.path, Problem: p.msg})
	}
	return vs
}

// decodePlain decodes JSON the ordinary way (numbers as float64).
func decodePlain(data string) any {
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		return data
	}
	return v
}
