package kubeloop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Recorded events (docs/contract.md, "Recorded events"): <case>.json = {description, request, response}.
// CheckFixture runs one through a function in-process and compares under the contract's ordering rules;
// `kubeloop replay --to <url>` is the full check over HTTP (patches judged by their effect).

// Fixture is one recorded case, both halves as decoded JSON.
type Fixture struct {
	Name        string
	Description string         `json:"description"`
	Request     map[string]any `json:"request"`
	Response    map[string]any `json:"response"`
}

// LoadFixtures reads a file, or every *.json directly inside a folder (sorted), checking both halves
// against the schemas.
func LoadFixtures(path string) ([]Fixture, error) {
	files := []string{path}
	if info, err := os.Stat(path); err != nil {
		return nil, err
	} else if info.IsDir() {
		files, _ = filepath.Glob(filepath.Join(path, "*.json"))
		sort.Strings(files)
	}
	fixtures := make([]Fixture, 0, len(files))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var f Fixture
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		side := "reconcile"
		if f.Request["kind"] == "AdmissionRequest" {
			side = "admission"
		}
		problems := append(Validate(Schema(side+"-request"), any(f.Request)), Validate(Schema(side+"-response"), any(f.Response))...)
		if len(problems) > 0 {
			return nil, fmt.Errorf("%s: not a valid fixture: %s", file, joinFirst(problems, 5))
		}
		f.Name = strings.TrimSuffix(filepath.Base(file), ".json")
		fixtures = append(fixtures, f)
	}
	return fixtures, nil
}

// normalised keeps what the router's behaviour depends on: actions per target in order, status actions
// in order, events as a sorted list of type/reason, and the other fields.
func normalised(response map[string]any) map[string]any {
	if response["kind"] == "AdmissionResponse" {
		return response
	}
	perTarget := map[string][]any{}
	statuses := []any{}
	events := []string{}
	actions, _ := response["actions"].([]any)
	for _, raw := range actions {
		action, _ := raw.(map[string]any)
		switch action["op"] {
		case "event":
			events = append(events, fmt.Sprint(action["type"], "/", action["reason"]))
		case "status":
			statuses = append(statuses, action["status"])
		default:
			target := action["target"]
			if object, ok := action["object"].(map[string]any); ok {
				meta, _ := object["metadata"].(map[string]any)
				target = []any{object["apiVersion"], object["kind"], meta["namespace"], meta["name"], meta["generateName"]}
			}
			key, _ := json.Marshal(target)
			perTarget[string(key)] = append(perTarget[string(key)], action)
		}
	}
	sort.Strings(events)
	out := map[string]any{"targets": perTarget, "statuses": statuses, "events": events}
	for k, v := range response {
		if k != "actions" {
			out[k] = v
		}
	}
	return out
}

// CheckFixture returns nil when fn answers the fixture's request as recorded, else an error showing both.
func CheckFixture(fn Function, fixture Fixture) error {
	actual, err := fn.Call(fixture.Request)
	if err != nil {
		return err
	}
	if reflect.DeepEqual(normalised(actual), normalised(fixture.Response)) {
		return nil
	}
	want, _ := json.Marshal(fixture.Response)
	got, _ := json.Marshal(actual)
	return fmt.Errorf("%s: expected %s\n     got %s", fixture.Name, want, got)
}
