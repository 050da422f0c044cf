package kubeloop

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// A batch over real HTTP: the handler advertises batches on a single reply, then answers a plain JSON
// batch and a CloudEvents batch item by item, a panicking or invalid item with its own error only.
func TestAnswersBatchesItemByItem(t *testing.T) {
	server := httptest.NewServer(NewHandler(labeller, Options{}))
	defer server.Close()
	if res, _, raw := post(t, server.URL+"/", jsonType, requestJSON); res.Header.Get(BatchMaxHeader) != "64" {
		t.Fatalf("a single reply must advertise batches: %v %s", res.Header, raw)
	}
	withID := func(id, from string) string {
		return strings.Replace(from, `"reconcileId":"rec-1"`, `"reconcileId":"`+id+`"`, 1)
	}
	panics := strings.Replace(requestJSON, `"app":"web"`, `"misbehave":"panic"`, 1)
	noObject := `{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileRequest","loop":"t","reconcileId":"no-object","trigger":{"type":"ADDED"},"children":{},"now":"2026-11-22T10:00:00Z"}`
	items := []string{withID("a", requestJSON), withID("boom", panics), noObject, withID("b", requestJSON)}
	res, reply, raw := post(t, server.URL+"/", jsonType, `{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileBatchRequest","items":[`+strings.Join(items, ",")+`]}`)
	if res.StatusCode != 200 || reply["kind"] != "ReconcileBatchResponse" {
		t.Fatalf("json batch: %d %s", res.StatusCode, raw)
	}
	byID := map[string]map[string]any{}
	for _, item := range reply["items"].([]any) {
		entry := item.(map[string]any)
		byID[entry["reconcileId"].(string)] = entry
	}
	if byID["a"]["response"] == nil || byID["b"]["response"] == nil {
		t.Errorf("good items must get their replies: %s", raw)
	}
	if e, _ := byID["boom"]["error"].(map[string]any); e == nil || e["code"] != "FunctionError" || e["statusCode"] != 500.0 {
		t.Errorf("a panicking item gets its own 500: %v", byID["boom"])
	}
	if e, _ := byID["no-object"]["error"].(map[string]any); e == nil || e["code"] != "InvalidRequest" || e["statusCode"] != 400.0 {
		t.Errorf("an invalid item gets its own 400: %v", byID["no-object"])
	}
	events := `[{"specversion":"1.0","id":"a","source":"/t","type":"` + EventType + `","data":` + withID("a", requestJSON) + `},` +
		`{"specversion":"1.0","id":"other","source":"/t","type":"com.example.other","data":` + requestJSON + `}]`
	res, _, raw = post(t, server.URL+"/", map[string]string{"Content-Type": "application/cloudevents-batch+json"}, events)
	var answered []map[string]any
	if err := json.Unmarshal(raw, &answered); err != nil || res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/cloudevents-batch+json") || len(answered) != 2 {
		t.Fatalf("cloudevents batch: %d %s", res.StatusCode, raw)
	}
	if answered[0]["id"] != "a" || answered[0]["type"] != ResponseEventType {
		t.Errorf("want a's response event, got %v", answered[0])
	}
	if data, _ := answered[1]["data"].(map[string]any); answered[1]["type"] != ErrorEventType || data["code"] != "InvalidCloudEvent" {
		t.Errorf("want other's error event, got %v", answered[1])
	}
}
