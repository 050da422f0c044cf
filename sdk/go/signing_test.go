package kubeloop

import (
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The specification's own example (docs/contract.md, "Signed calls").
const exampleSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var exampleBody = []byte(`{"test": 2432232314}`)

func exampleHeaders() http.Header {
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	return h
}

func TestSignsTheSpecificationExample(t *testing.T) {
	keys, err := ParseSecrets(exampleSecret, "secret")
	if err != nil {
		t.Fatal(err)
	}
	got := Sign(keys, exampleBody, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0))
	if got.Get("webhook-signature") != exampleHeaders().Get("webhook-signature") {
		t.Errorf("got %q", got.Get("webhook-signature"))
	}
	if id, err := Verify(keys, exampleHeaders(), exampleBody, time.Unix(1614265330+299, 0)); err != nil || id != "msg_p5jXN8AQM9LWM0D4loKWxJek" {
		t.Errorf("verify: %q %v", id, err)
	}
}

func TestRefusesStaleFutureTamperedForgedAndMissingSignatures(t *testing.T) {
	keys, _ := ParseSecrets(exampleSecret, "secret")
	other, _ := ParseSecrets("whsec_"+strings.Repeat("A", 32), "other")
	cases := []struct {
		keys    [][]byte
		header  http.Header
		body    []byte
		now     int64
		message string
	}{
		{keys, exampleHeaders(), exampleBody, 1614265330 + 301, "stale or replayed"},
		{keys, exampleHeaders(), exampleBody, 1614265330 - 301, "in the future"},
		{keys, exampleHeaders(), []byte(`{"test": 2432232315}`), 1614265330, "no webhook-signature matches"},
		{other, exampleHeaders(), exampleBody, 1614265330, "no webhook-signature matches"},
		{keys, http.Header{"Webhook-Id": {"msg_1"}}, exampleBody, 1614265330, "missing signature"},
	}
	for _, c := range cases {
		if _, err := Verify(c.keys, c.header, c.body, time.Unix(c.now, 0)); err == nil || !strings.Contains(err.Error(), c.message) {
			t.Errorf("want %q, got %v", c.message, err)
		}
	}
}

func TestRotationAcceptsEitherKeyAndSignsWithEach(t *testing.T) {
	keys, _ := ParseSecrets("whsec_"+strings.Repeat("B", 32)+" "+exampleSecret, "secret")
	if _, err := Verify(keys, exampleHeaders(), exampleBody, time.Unix(1614265330, 0)); err != nil {
		t.Error(err)
	}
	if n := len(strings.Fields(Sign(keys, exampleBody, "", time.Now()).Get("webhook-signature"))); n != 2 {
		t.Errorf("want 2 signatures, got %d", n)
	}
	for _, bad := range []string{"", "whsec_???", "whsec_AAAA", strings.Repeat(exampleSecret+" ", 5)} {
		if _, err := ParseSecrets(bad, "secret"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// docs/contract.md's worked example: the keys derived for Loop pod-name-label, and the signatures.
func TestDerivesTheContractExampleKeysAndSignatures(t *testing.T) {
	keys, _ := ParseSecrets(exampleSecret, "secret")
	const audience = "loop/pod-name-label"
	if got := hex.EncodeToString(Derive(keys, "request", audience)[0]); got != "21653aac44322ad942103cda8d4b8811556d4372f08fa814577932f5c5832504" {
		t.Errorf("request key %s", got)
	}
	if got := hex.EncodeToString(Derive(keys, "reply", audience)[0]); got != "dc0eca6e3f0673ea7c9faf902e0c666aa08d3a8159480bf0997c71fb073b17e2" {
		t.Errorf("reply key %s", got)
	}
	request := exampleHeaders()
	request.Set("webhook-signature", "v1,iKp84Q5gTCMXTBLWRCdbfgAYxSv2kqOT575Db0wrMis=")
	request.Set(AudienceHeader, audience)
	if id, aud, err := VerifyRequest(keys, request, exampleBody, time.Unix(1614265330, 0)); err != nil || id != "msg_p5jXN8AQM9LWM0D4loKWxJek" || aud != audience {
		t.Errorf("verify request: %q %q %v", id, aud, err)
	}
	if got := SignReply(keys, audience, "msg_p5jXN8AQM9LWM0D4loKWxJek", exampleBody, time.Unix(1614265330, 0)).Get("webhook-signature"); got != "v1,LqR8+U4tLRqVY2UfY2JYocnDOnbSnmjuaF8YcDohXlE=" {
		t.Errorf("reply signature %s", got)
	}
	namespaced := Derive(keys, "request", "loop/team-a/labeller")
	headers := Sign(namespaced, exampleBody, "msg_ns", time.Unix(1614265330, 0))
	headers.Set(AudienceHeader, "loop/team-a/labeller")
	if _, aud, err := VerifyRequest(keys, headers, exampleBody, time.Unix(1614265330, 0)); err != nil || aud != "loop/team-a/labeller" {
		t.Errorf("namespaced audience: %q %v", aud, err)
	}
	for _, aud := range []string{"", "Loop/Pod", "loop/other", "loop/team-b/labeller", "loop/a/b/c", "loop//x"} {
		headers.Set(AudienceHeader, aud)
		if _, _, err := VerifyRequest(keys, headers, exampleBody, time.Unix(1614265330, 0)); err == nil {
			t.Errorf("accepted namespaced-shaped audience %q", aud)
		}
	}
	for _, aud := range []string{"", "Loop/Pod", "loop/other"} {
		request.Set(AudienceHeader, aud)
		if _, _, err := VerifyRequest(keys, request, exampleBody, time.Unix(1614265330, 0)); err == nil {
			t.Errorf("accepted audience %q", aud)
		}
	}
}
