package kubeloop

import (
	"encoding/json"
	"testing"
)

// RelatedNamed finds an object of a related entry by name from a request as it arrives on the wire.
func TestRelatedNamed(t *testing.T) {
	var request ReconcileRequest
	body := `{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileRequest","loop":"t","trigger":{"type":"ADDED"},"object":{},"children":{},"now":"",` +
		`"related":{"config":[{"kind":"ConfigMap","metadata":{"name":"web","namespace":"shop"},"data":{"a":"1"}},` +
		`{"kind":"ConfigMap","metadata":{"name":"web","namespace":"other"},"data":{"a":"2"}}],"empty":[]}}`
	if err := json.Unmarshal([]byte(body), &request); err != nil {
		t.Fatal(err)
	}
	if got := request.RelatedNamed("config", "web"); got == nil || got.Namespace() != "shop" {
		t.Errorf("RelatedNamed(config, web) = %v, want the first web", got)
	}
	if got := request.RelatedNamedIn("config", "other", "web"); got == nil || got["data"].(map[string]any)["a"] != "2" {
		t.Errorf("RelatedNamedIn(config, other, web) = %v, want the one in other", got)
	}
	for _, missing := range [][2]string{{"config", "api"}, {"empty", "web"}, {"absent", "web"}} {
		if got := request.RelatedNamed(missing[0], missing[1]); got != nil {
			t.Errorf("RelatedNamed(%s, %s) = %v, want nil", missing[0], missing[1], got)
		}
	}
	if got := request.RelatedNamedIn("config", "elsewhere", "web"); got != nil {
		t.Errorf("RelatedNamedIn in another namespace = %v, want nil", got)
	}
	if got := (ReconcileRequest{}).RelatedNamed("config", "web"); got != nil {
		t.Errorf("without related: %v, want nil", got)
	}
}
