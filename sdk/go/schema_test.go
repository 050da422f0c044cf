package kubeloop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The drift test: every Go type of the contract has exactly the fields of its schema, and a field is
// required in the schema exactly when the Go type always writes it (no omitempty).

func node(t *testing.T, schema map[string]any, path ...string) map[string]any {
	t.Helper()
	current := schema
	for _, step := range path {
		next, ok := current[step].(map[string]any)
		if !ok {
			t.Fatalf("schema has no %s", strings.Join(path, "/"))
		}
		current = next
	}
	return current
}

func actionBranch(t *testing.T, op string) map[string]any {
	items := node(t, Schema("reconcile-response"), "properties", "actions", "items")
	for _, b := range items["oneOf"].([]any) {
		branch := b.(map[string]any)
		if node(t, branch, "properties", "op")["const"] == op {
			return branch
		}
	}
	t.Fatalf("no action branch for op %q", op)
	return nil
}

func schemaFields(schema map[string]any) (fields, required []string) {
	for name := range schema["properties"].(map[string]any) {
		fields = append(fields, name)
	}
	list, _ := schema["required"].([]any)
	for _, r := range list {
		required = append(required, r.(string))
	}
	sort.Strings(fields)
	sort.Strings(required)
	return fields, required
}

func goFields(typ reflect.Type) (fields, required []string) {
	for i := 0; i < typ.NumField(); i++ {
		tag := typ.Field(i).Tag.Get("json")
		if tag == "" || tag == "-" {
			continue
		}
		name, options, _ := strings.Cut(tag, ",")
		fields = append(fields, name)
		if !strings.Contains(options, "omitempty") {
			required = append(required, name)
		}
	}
	sort.Strings(fields)
	sort.Strings(required)
	return fields, required
}

func TestGoTypesMatchTheSchemas(t *testing.T) {
	request, response := Schema("reconcile-request"), Schema("reconcile-response")
	admissionRequest, admissionResponse := Schema("admission-request"), Schema("admission-response")
	cases := []struct {
		name   string
		typ    any
		schema map[string]any
	}{
		{"ReconcileRequest", ReconcileRequest{}, request},
		{"Trigger", Trigger{}, node(t, request, "properties", "trigger")},
		{"ObjectTarget (trigger.child)", ObjectTarget{}, node(t, request, "properties", "trigger", "properties", "child")},
		{"ReconcileResponse", ReconcileResponse{}, response},
		{"ReconcileError", ReconcileError{}, node(t, response, "properties", "error")},
		{"ObjectTarget (patch target)", ObjectTarget{}, node(t, actionBranch(t, "patch"), "properties", "target")},
		{"PatchOperation", PatchOperation{}, node(t, actionBranch(t, "patch"), "properties", "patch", "items")},
		{"Preconditions", Preconditions{}, node(t, actionBranch(t, "delete"), "properties", "preconditions")},
		{"AdmissionRequest", AdmissionRequest{}, admissionRequest},
		{"GroupVersionKind", GroupVersionKind{}, node(t, admissionRequest, "properties", "requestKind")},
		{"GroupVersionResource", GroupVersionResource{}, node(t, admissionRequest, "properties", "resource")},
		{"UserInfo", UserInfo{}, node(t, admissionRequest, "properties", "userInfo")},
		{"AdmissionResponse", AdmissionResponse{}, admissionResponse},
		{"AdmissionStatus", AdmissionStatus{}, node(t, admissionResponse, "properties", "status")},
	}
	for _, c := range cases {
		wantFields, wantRequired := schemaFields(c.schema)
		gotFields, gotRequired := goFields(reflect.TypeOf(c.typ))
		if !reflect.DeepEqual(gotFields, wantFields) {
			t.Errorf("%s: Go fields %v, schema fields %v", c.name, gotFields, wantFields)
		}
		if !reflect.DeepEqual(gotRequired, wantRequired) {
			t.Errorf("%s: Go always writes %v, schema requires %v", c.name, gotRequired, wantRequired)
		}
	}
}

func TestActionFieldsMatchTheSchemaBranches(t *testing.T) {
	items := node(t, Schema("reconcile-response"), "properties", "actions", "items")
	if len(items["oneOf"].([]any)) != len(actionFields) {
		t.Fatalf("the schema has %d action ops, the Go SDK %d", len(items["oneOf"].([]any)), len(actionFields))
	}
	for op, fields := range actionFields {
		wantFields, wantRequired := schemaFields(actionBranch(t, op))
		var gotFields, gotRequired []string
		for field, required := range fields {
			gotFields = append(gotFields, field)
			if required {
				gotRequired = append(gotRequired, field)
			}
		}
		sort.Strings(gotFields)
		sort.Strings(gotRequired)
		if !reflect.DeepEqual(gotFields, wantFields) || !reflect.DeepEqual(gotRequired, wantRequired) {
			t.Errorf("op %s: Go writes %v (required %v), schema has %v (required %v)", op, gotFields, gotRequired, wantFields, wantRequired)
		}
	}
}

func TestEmbeddedSchemasAreTheRepositoryOnes(t *testing.T) {
	repository := filepath.Join("..", "..", "schemas")
	if _, err := os.Stat(repository); err != nil {
		t.Skip("outside the kubeloop repository")
	}
	for _, name := range []string{"reconcile-request", "reconcile-response", "admission-request", "admission-response"} {
		data, err := os.ReadFile(filepath.Join(repository, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		_ = json.Unmarshal(data, &want)
		if !reflect.DeepEqual(Schema(name), want) {
			t.Errorf("sdk/go/schemas/%s.json differs from schemas/%s.json: run `npm run schemas`", name, name)
		}
	}
}

func TestValidateReportsWhatIsWrong(t *testing.T) {
	var reply any
	_ = json.Unmarshal([]byte(`{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileResponse","actions":[{"op":"explode"},{"op":"event","type":"Bad","reason":"x y","message":"m"}]}`), &reply)
	got := strings.Join(Validate(Schema("reconcile-response"), reply), "\n")
	for _, want := range []string{"/actions/0/op: must be one of", "/actions/1/type: must be one of", "/actions/1/reason: must match"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in\n%s", want, got)
		}
	}
	fixtures, err := filepath.Glob(filepath.Join("..", "..", "test", "fixtures", "*", "*.json"))
	if err != nil || len(fixtures) == 0 {
		t.Skip("outside the kubeloop repository")
	}
	for _, file := range fixtures {
		data, _ := os.ReadFile(file)
		var f map[string]any
		_ = json.Unmarshal(data, &f)
		if f["response"] == nil {
			continue
		}
		if _, err := LoadFixtures(file); err != nil {
			t.Errorf("a recorded fixture the router accepts is refused: %v", err)
		}
	}
}
