package kubeloop

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks signing as docs/contract.md ("Signed calls") specifies it: HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<body>" with a key derived from the "whsec_" secret for one direction
// and audience, "v1,<base64>" signatures, a 5-minute tolerance, several space-separated keys in a
// rotation. Derive, Sign and Verify are the only functions that know the scheme: when the contract's
// scheme changes, only they change.

const (
	secretPrefix     = "whsec_"
	toleranceSeconds = 5 * 60
	maxKeys          = 4
)

var messageIDPattern = regexp.MustCompile(`^[^.\s]{1,256}$`)

// AudienceHeader names whom a request is for: "loop/<name>" or "hook/<name>".
const AudienceHeader = "x-kubeloop-audience"

// "loop/<name>" for a ClusterLoop, "loop/<namespace>/<name>" for a namespaced Loop (likewise "hook/...").
var audiencePattern = regexp.MustCompile(`^[a-z]+/(?:[a-z0-9][a-z0-9-]{0,62}/)?[a-z0-9][a-z0-9.-]{0,252}$`)

// Derive returns the keys of one direction ("request" or "reply") and audience: HMAC-SHA256(secret key,
// "kubeloop.dev/signing/v1 <direction> <audience>") for each secret key. Nothing is signed with a
// secret's key itself, so a reply never passes as a request, nor a message for one Loop or hook as one
// for another.
func Derive(keys [][]byte, direction, audience string) [][]byte {
	derived := make([][]byte, len(keys))
	for i, key := range keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte("kubeloop.dev/signing/v1 " + direction + " " + audience))
		derived[i] = mac.Sum(nil)
	}
	return derived
}

// VerifyRequest checks a request against the request keys of the audience it names (x-kubeloop-audience)
// and returns its webhook-id and audience, or an error saying why it is refused.
func VerifyRequest(keys [][]byte, header http.Header, body []byte, now time.Time) (id, audience string, err error) {
	audience = header.Get(AudienceHeader)
	if !audiencePattern.MatchString(audience) {
		return "", "", fmt.Errorf(`missing or malformed %s header: want "loop/[<namespace>/]<name>" or "hook/[<namespace>/]<name>"`, AudienceHeader)
	}
	id, err = Verify(Derive(keys, "request", audience), header, body, now)
	if err != nil {
		return "", "", err
	}
	return id, audience, nil
}

// SignReply returns the headers of the reply to a verified request: its webhook-id, the reply keys of its audience.
func SignReply(keys [][]byte, audience, id string, body []byte, now time.Time) http.Header {
	return Sign(Derive(keys, "reply", audience), body, id, now)
}

// ParseSecrets decodes one or more space-separated "whsec_<base64>" secrets (new and old during a
// rotation); the error names source, never the secret.
func ParseSecrets(text, source string) ([][]byte, error) {
	parts := strings.Fields(text)
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s is empty", source)
	}
	if len(parts) > maxKeys {
		return nil, fmt.Errorf("%s holds %d keys; at most %d", source, len(parts), maxKeys)
	}
	keys := make([][]byte, 0, len(parts))
	for _, part := range parts {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(part, secretPrefix))
		if err != nil {
			return nil, fmt.Errorf("%s is not %q followed by base64", source, secretPrefix)
		}
		if len(key) < 24 || len(key) > 64 {
			return nil, fmt.Errorf("%s decodes to %d bytes; want 24 to 64 random bytes", source, len(key))
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func signature(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func newMessageID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "msg_" + hex.EncodeToString(b)
}

// Sign returns the three headers for body: one "v1," signature per key; a fresh id when id is "".
func Sign(keys [][]byte, body []byte, id string, now time.Time) http.Header {
	if id == "" {
		id = newMessageID()
	}
	timestamp := now.Unix()
	signatures := make([]string, len(keys))
	for i, key := range keys {
		signatures[i] = "v1," + signature(key, id, timestamp, body)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(timestamp, 10))
	h.Set("webhook-signature", strings.Join(signatures, " "))
	return h
}

// Verify returns the webhook-id when a signature matches body with any key and the timestamp is within
// five minutes of now; otherwise an error saying why.
func Verify(keys [][]byte, header http.Header, body []byte, now time.Time) (string, error) {
	id, timestampText, offered := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || timestampText == "" || offered == "" {
		return "", errors.New("missing signature: want one each of the webhook-id, webhook-timestamp and webhook-signature headers")
	}
	if !messageIDPattern.MatchString(id) {
		return "", errors.New(`webhook-id must be 1 to 256 characters without "." or spaces`)
	}
	timestamp, err := strconv.ParseInt(timestampText, 10, 64)
	if err != nil || len(timestampText) > 12 || timestamp < 0 {
		return "", errors.New("webhook-timestamp must be Unix seconds")
	}
	age := now.Unix() - timestamp
	if age > toleranceSeconds {
		return "", fmt.Errorf("webhook-timestamp is %d s old; at most %d s is accepted (stale or replayed)", age, toleranceSeconds)
	}
	if -age > toleranceSeconds {
		return "", fmt.Errorf("webhook-timestamp is %d s in the future; at most %d s is accepted", -age, toleranceSeconds)
	}
	for _, key := range keys {
		expected := signature(key, id, timestamp, body)
		for _, candidate := range strings.Split(offered, " ") {
			if strings.HasPrefix(candidate, "v1,") && hmac.Equal([]byte(candidate[3:]), []byte(expected)) {
				return id, nil
			}
		}
	}
	if len(keys) == 1 {
		return "", errors.New("no webhook-signature matches the body with this key")
	}
	return "", fmt.Errorf("no webhook-signature matches the body with any of these %d keys", len(keys))
}
