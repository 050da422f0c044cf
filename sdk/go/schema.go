package kubeloop

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The contract's JSON Schemas (draft-07), copied from the repository's schemas/ folder; requests and
// replies are checked against the same documents as the router's (schema_test.go keeps the copy equal).
//
//go:embed schemas/*.json
var schemaFiles embed.FS

var (
	schemaCache = map[string]map[string]any{}
	schemaLock  sync.Mutex
)

// Schema returns one of reconcile-request, reconcile-response, admission-request, admission-response.
func Schema(name string) map[string]any {
	schemaLock.Lock()
	defer schemaLock.Unlock()
	if s, ok := schemaCache[name]; ok {
		return s
	}
	data, err := schemaFiles.ReadFile("schemas/" + name + ".json")
	if err != nil {
		panic(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		panic(err)
	}
	schemaCache[name] = s
	return s
}

// Validate lists every way value (decoded JSON) breaks schema, as "<json pointer>: <what>".
func Validate(schema any, value any) []string {
	var errs []string
	validateAt(schema, value, "", &errs)
	return errs
}

func at(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

func typeMatches(kind string, v any) bool {
	switch kind {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "null":
		return v == nil
	}
	return false
}

func number(v any) (float64, bool) { f, ok := v.(float64); return f, ok }

func validateAt(schemaValue any, value any, path string, errs *[]string) {
	if b, ok := schemaValue.(bool); ok {
		if !b {
			*errs = append(*errs, at(path)+": is not allowed")
		}
		return
	}
	schema, _ := schemaValue.(map[string]any)
	if c, ok := schema["const"]; ok && !reflect.DeepEqual(c, value) {
		*errs = append(*errs, fmt.Sprintf("%s: must be %v", at(path), c))
		return
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || reflect.DeepEqual(e, value)
		}
		if !found {
			*errs = append(*errs, fmt.Sprintf("%s: must be one of %v", at(path), enum))
			return
		}
	}
	if kind, ok := schema["type"]; ok {
		kinds := []string{}
		switch k := kind.(type) {
		case string:
			kinds = append(kinds, k)
		case []any:
			for _, x := range k {
				kinds = append(kinds, x.(string))
			}
		}
		matched := false
		for _, k := range kinds {
			matched = matched || typeMatches(k, value)
		}
		if !matched {
			*errs = append(*errs, fmt.Sprintf("%s: must be %s", at(path), strings.Join(kinds, " or ")))
			return
		}
	}
	switch v := value.(type) {
	case string:
		length := float64(len([]rune(v)))
		if m, ok := number(schema["minLength"]); ok && length < m {
			*errs = append(*errs, fmt.Sprintf("%s: must have at least %v characters", at(path), m))
		}
		if m, ok := number(schema["maxLength"]); ok && length > m {
			*errs = append(*errs, fmt.Sprintf("%s: must have at most %v characters", at(path), m))
		}
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(v) {
			*errs = append(*errs, fmt.Sprintf("%s: must match %s", at(path), p))
		}
	case float64:
		if m, ok := number(schema["minimum"]); ok && v < m {
			*errs = append(*errs, fmt.Sprintf("%s: must be >= %v", at(path), m))
		}
		if m, ok := number(schema["maximum"]); ok && v > m {
			*errs = append(*errs, fmt.Sprintf("%s: must be <= %v", at(path), m))
		}
	case []any:
		if m, ok := number(schema["minItems"]); ok && float64(len(v)) < m {
			*errs = append(*errs, fmt.Sprintf("%s: must have at least %v items", at(path), m))
		}
		if items, ok := schema["items"]; ok {
			for i, item := range v {
				validateAt(items, item, fmt.Sprintf("%s/%d", path, i), errs)
			}
		}
	case map[string]any:
		validateObject(schema, v, path, errs)
	}
	validateCombinators(schema, value, path, errs)
}

func validateObject(schema map[string]any, v map[string]any, path string, errs *[]string) {
	required, _ := schema["required"].([]any)
	for _, name := range required {
		if _, ok := v[name.(string)]; !ok {
			*errs = append(*errs, fmt.Sprintf("%s: must have required property '%s'", at(path), name))
		}
	}
	properties, _ := schema["properties"].(map[string]any)
	extra, hasExtra := schema["additionalProperties"]
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		child := path + Pointer(name)
		if names, ok := schema["propertyNames"]; ok {
			validateAt(names, name, child, errs)
		}
		if member, ok := properties[name]; ok {
			validateAt(member, v[name], child, errs)
		} else if hasExtra {
			if b, isBool := extra.(bool); isBool && !b {
				*errs = append(*errs, fmt.Sprintf("%s: must not have property '%s'", at(path), name))
			} else if !isBool {
				validateAt(extra, v[name], child, errs)
			}
		}
	}
}

func validateCombinators(schema map[string]any, value any, path string, errs *[]string) {
	if branches, ok := schema["oneOf"].([]any); ok {
		discriminator, _ := schema["discriminator"].(map[string]any)
		tag, _ := discriminator["propertyName"].(string)
		if object, isObject := value.(map[string]any); tag != "" && isObject {
			// Judge the branch the tag names, so the message is about that branch's fields.
			var named any
			var allowed []string
			for _, b := range branches {
				constant := b.(map[string]any)["properties"].(map[string]any)[tag].(map[string]any)["const"]
				allowed = append(allowed, fmt.Sprintf("%q", constant))
				if reflect.DeepEqual(constant, object[tag]) {
					named = b
				}
			}
			if named == nil {
				*errs = append(*errs, fmt.Sprintf("%s/%s: must be one of %s", path, tag, strings.Join(allowed, ", ")))
			} else {
				validateAt(named, value, path, errs)
			}
		} else {
			matches := 0
			for _, b := range branches {
				if len(Validate(b, value)) == 0 {
					matches++
				}
			}
			if matches != 1 {
				*errs = append(*errs, at(path)+": must match exactly one schema in oneOf")
			}
		}
	}
	if branches, ok := schema["anyOf"].([]any); ok {
		matched := false
		for _, b := range branches {
			matched = matched || len(Validate(b, value)) == 0
		}
		if !matched {
			*errs = append(*errs, at(path)+": must match a schema in anyOf")
		}
	}
	if condition, ok := schema["if"]; ok && len(Validate(condition, value)) == 0 {
		if then, ok := schema["then"]; ok {
			validateAt(then, value, path, errs)
		}
	}
}
