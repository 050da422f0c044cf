package kubeloop

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The handler over real HTTP (httptest): status and error codes, CloudEvents modes with the reply event,
// probes, the signing gate, and the function's own failures as 500s.

const requestJSON = `{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileRequest","loop":"t","reconcileId":"rec-1","trigger":{"type":"ADDED"},` +
	`"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"shop","resourceVersion":"7","labels":{"app":"web"}}},"children":{},"now":"2026-11-22T10:00:00Z"}`

var labeller = DefineFunction("labeller", func(r *ReconcileRequest) *ReconcileResponse {
	switch r.Object.Labels()["misbehave"] {
	case "panic":
		panic("cannot")
	case "invalid":
		return Respond(Event("Bad", "not camel case", "x"))
	}
	return Respond(PatchAction(r.Object, func(draft Object) {
		draft.Metadata()["labels"].(map[string]any)["seen"] = "true"
	}), Event("Normal", "Seen", "seen"))
})

func post(t *testing.T, url string, header map[string]string, body string) (*http.Response, map[string]any, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var parsed map[string]any
	_ = json.Unmarshal(raw, &parsed)
	return res, parsed, raw
}

var jsonType = map[string]string{"Content-Type": "application/json"}

func TestAnswersPlainJSONAndBothCloudEventModes(t *testing.T) {
	server := httptest.NewServer(NewHandler(labeller, Options{}))
	defer server.Close()
	res, reply, _ := post(t, server.URL+"/reconcile", jsonType, requestJSON)
	if res.StatusCode != 200 || res.Header.Get(ReconcileIDHeader) != "rec-1" || len(reply["actions"].([]any)) != 2 {
		t.Fatalf("plain: %d %v", res.StatusCode, reply)
	}
	patch := reply["actions"].([]any)[0].(map[string]any)["patch"].([]any)
	if got, _ := json.Marshal(patch); string(got) != `[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/labels/seen","value":"true"}]` {
		t.Errorf("patch %s", got)
	}
	binary := map[string]string{"Content-Type": "application/json", "Ce-Specversion": "1.0", "Ce-Id": "e1", "Ce-Source": "/t", "Ce-Type": EventType}
	res, reply, _ = post(t, server.URL+"/", binary, requestJSON)
	if res.StatusCode != 200 || res.Header.Get("Ce-Type") != ResponseEventType || res.Header.Get("Ce-Id") != "rec-1" || reply["kind"] != "ReconcileResponse" {
		t.Errorf("binary: %d %v %v", res.StatusCode, res.Header, reply)
	}
	event := `{"specversion":"1.0","id":"e1","source":"/t","type":"` + EventType + `","datacontenttype":"application/json","data":` + requestJSON + `}`
	res, reply, _ = post(t, server.URL+"/", map[string]string{"Content-Type": "application/cloudevents+json"}, event)
	if res.StatusCode != 200 || reply["type"] != ResponseEventType || reply["id"] != "rec-1" || reply["data"].(map[string]any)["kind"] != "ReconcileResponse" {
		t.Errorf("structured: %d %v", res.StatusCode, reply)
	}
}

func TestRefusesBadInputWithTheContractCodes(t *testing.T) {
	server := httptest.NewServer(NewHandler(labeller, Options{BodyLimitBytes: 4096}))
	defer server.Close()
	withLabel := func(v string) string { return strings.Replace(requestJSON, `"app":"web"`, `"misbehave":"`+v+`"`, 1) }
	cases := []struct {
		header map[string]string
		body   string
		status int
		code   string
	}{
		{map[string]string{"Content-Type": "text/plain"}, "x", 415, "UnsupportedMediaType"},
		{map[string]string{"Content-Type": "application/cloudevents-batch+json"}, "[]", 400, "InvalidCloudEvent"},
		{jsonType, `{"kind":"ReconcileBatchRequest","items":[` + requestJSON + `,` + requestJSON + `]}`, 400, "InvalidRequest"},
		{jsonType, "", 400, "InvalidJSON"},
		{jsonType, "{nope", 400, "InvalidJSON"},
		{jsonType, `{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileRequest"}`, 400, "InvalidRequest"},
		{jsonType, strings.Replace(requestJSON, "kubeloop.dev/v1", "kubeloop.dev/v2", 1), 400, "UnsupportedApiVersion"},
		{jsonType, `{"pad":"` + strings.Repeat("x", 5000) + `"}`, 413, "PayloadTooLarge"},
		{map[string]string{"Content-Type": "application/json", "Ce-Specversion": "1.0", "Ce-Id": "e", "Ce-Source": "/t", "Ce-Type": "other"}, requestJSON, 400, "InvalidCloudEvent"},
		{jsonType, withLabel("panic"), 500, "FunctionError"},
		{jsonType, withLabel("invalid"), 500, "InvalidResponse"},
	}
	for _, c := range cases {
		res, reply, raw := post(t, server.URL+"/", c.header, c.body)
		if res.StatusCode != c.status || reply["code"] != c.code || reply["message"] == "" || res.Header.Get(ReconcileIDHeader) == "" {
			t.Errorf("want %d %s, got %d %s", c.status, c.code, res.StatusCode, raw)
		}
	}
	for path, status := range map[string]int{"/": 405, "/reconcile": 405, "/other": 404, "/healthz": 200, "/readyz": 200} {
		res, err := http.Get(server.URL + path)
		if err != nil || res.StatusCode != status {
			t.Errorf("GET %s: want %d, got %v %v", path, status, res.StatusCode, err)
		}
		res.Body.Close()
	}
}

func TestWithAKeyRefusesUnsignedRequestsAndSignsRepliesForTheRequest(t *testing.T) {
	keys, _ := ParseSecrets("whsec_"+strings.Repeat("C", 32), "secret")
	handler := NewHandler(labeller, Options{SigningKeys: keys})
	server := httptest.NewServer(handler)
	defer server.Close()
	const audience = "loop/pod-name-label"
	requestKeys := Derive(keys, "request", audience)
	signedHeaders := func(h http.Header, aud string) map[string]string {
		return map[string]string{"Content-Type": "application/json", AudienceHeader: aud, "Webhook-Id": h.Get("webhook-id"), "Webhook-Timestamp": h.Get("webhook-timestamp"), "Webhook-Signature": h.Get("webhook-signature")}
	}
	res, reply, _ := post(t, server.URL+"/", jsonType, requestJSON)
	if res.StatusCode != 401 || reply["code"] != "InvalidSignature" || res.Header.Get("webhook-signature") != "" {
		t.Errorf("unsigned: %d %v, refusal signed: %q", res.StatusCode, reply, res.Header.Get("webhook-signature"))
	}
	refused := map[string]map[string]string{
		"stale":                     signedHeaders(Sign(requestKeys, []byte(requestJSON), "", time.Now().Add(-6*time.Minute)), audience),
		"signed with the secret":    signedHeaders(Sign(keys, []byte(requestJSON), "", time.Now()), audience),
		"signed with the reply key": signedHeaders(Sign(Derive(keys, "reply", audience), []byte(requestJSON), "", time.Now()), audience),
		"for another audience":      signedHeaders(Sign(requestKeys, []byte(requestJSON), "", time.Now()), "loop/other"),
		"without an audience":       signedHeaders(Sign(requestKeys, []byte(requestJSON), "", time.Now()), ""),
	}
	for name, headers := range refused {
		if res, _, _ := post(t, server.URL+"/", headers, requestJSON); res.StatusCode != 401 || res.Header.Get("webhook-signature") != "" {
			t.Errorf("%s: %d, refusal signed: %q", name, res.StatusCode, res.Header.Get("webhook-signature"))
		}
	}
	signed := Sign(requestKeys, []byte(requestJSON), "", time.Now())
	res, _, raw := post(t, server.URL+"/", signedHeaders(signed, audience), requestJSON)
	if id, err := Verify(Derive(keys, "reply", audience), res.Header, raw, time.Now()); res.StatusCode != 200 || err != nil || id != signed.Get("webhook-id") {
		t.Errorf("signed: %d %q %v", res.StatusCode, id, err)
	}
	if _, err := Verify(requestKeys, res.Header, raw, time.Now()); err == nil {
		t.Error("the reply verifies with the request key")
	}
	handler.SetDraining()
	if res, _ := http.Get(server.URL + "/readyz"); res.StatusCode != 503 {
		t.Errorf("readyz while draining: %d", res.StatusCode)
	}
}

func TestAdmissionTakesPlainJSONOnlyAndAValidatingFunctionNoPatch(t *testing.T) {
	stamp := DefineAdmission("stamp", "validating", func(r *AdmissionRequest) *AdmissionResponse {
		return Mutate(r, func(draft Object) { draft.Metadata()["labels"] = map[string]any{"team": "a"} })
	})
	server := httptest.NewServer(NewHandler(stamp, Options{}))
	defer server.Close()
	body := `{"apiVersion":"kubeloop.dev/v1","kind":"AdmissionRequest","hook":"h","uid":"u-1","operation":"CREATE","requestKind":{"group":"","version":"v1","kind":"Pod"},` +
		`"resource":{"group":"","version":"v1","resource":"pods"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},"userInfo":{},"dryRun":false,"context":{},"now":"2026-11-22T10:00:00Z"}`
	if res, reply, _ := post(t, server.URL+"/admit", map[string]string{"Content-Type": "application/json", "Ce-Specversion": "1.0", "Ce-Id": "e", "Ce-Source": "/t", "Ce-Type": EventType}, body); res.StatusCode != 415 {
		t.Errorf("cloudevent: %d %v", res.StatusCode, reply)
	}
	if res, reply, _ := post(t, server.URL+"/admit", jsonType, body); res.StatusCode != 500 || reply["code"] != "InvalidResponse" || res.Header.Get(ReconcileIDHeader) != "u-1" {
		t.Errorf("validating with a patch: %d %v", res.StatusCode, reply)
	}
}

func TestFixturesCompareUnderTheOrderingRules(t *testing.T) {
	twoEvents := DefineFunction("two", func(*ReconcileRequest) *ReconcileResponse {
		return Respond(Event("Normal", "B", "b"), Event("Normal", "A", "a"))
	})
	var request, response map[string]any
	_ = json.Unmarshal([]byte(requestJSON), &request)
	recorded, _ := json.Marshal(Respond(Event("Normal", "A", "other words"), Event("Normal", "B", "b")))
	_ = json.Unmarshal(recorded, &response)
	fixture := Fixture{Name: "two", Request: request, Response: response}
	if err := CheckFixture(twoEvents, fixture); err != nil {
		t.Error(err)
	}
	if err := CheckFixture(labeller, fixture); err == nil || !strings.Contains(err.Error(), "expected") {
		t.Errorf("want a mismatch, got %v", err)
	}
}
