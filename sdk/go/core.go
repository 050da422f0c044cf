package kubeloop

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The request path (docs/contract.md, "Transport"): content negotiation, CloudEvents binary and structured
// mode, validation against the schemas, the call, the reply in the request's mode, and JSON error replies
// with their stable codes. Pure: headers and bytes in, status, headers and bytes out.

// ReconcileIDHeader carries the reconcile id (or admission uid) on every reply.
const ReconcileIDHeader = "X-Kubeloop-Reconcile-Id"

const maxDepth = 64

var reconcileIDPattern = regexp.MustCompile(`^[!-~]{1,128}$`)

type callError struct {
	status  int
	code    string
	message string
}

func (e *callError) Error() string { return e.message }

func joinFirst(items []string, n int) string {
	if len(items) > n {
		items = items[:n]
	}
	return strings.Join(items, "; ")
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Reply is one HTTP answer.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func jsonReply(status int, body any, header http.Header) Reply {
	data, _ := json.Marshal(body)
	if header == nil {
		header = http.Header{}
	}
	header.Set("Content-Type", "application/json; charset=utf-8")
	return Reply{Status: status, Header: header, Body: data}
}

// ErrorReply is {statusCode, code, message, reconcileId}, what every 4xx and 5xx of the POST path carries.
func ErrorReply(status int, code, message, reconcileID string) Reply {
	if reconcileID == "" {
		reconcileID = newUUID()
	}
	h := http.Header{}
	h.Set(ReconcileIDHeader, reconcileID)
	return jsonReply(status, map[string]any{"statusCode": status, "code": code, "message": message, "reconcileId": reconcileID}, h)
}

func modeOf(header http.Header) (string, *callError) {
	media, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	switch media {
	case "application/cloudevents+json":
		return "structured", nil
	case batchMediaType:
		return "cloudevents-batch", nil
	case "application/json":
		if header.Get("Ce-Specversion") != "" {
			return "binary", nil
		}
		return "json", nil
	}
	shown := "no content type"
	if media != "" {
		shown = fmt.Sprintf("content type %q", media)
	}
	return "", &callError{415, "UnsupportedMediaType", shown + " is not supported; send application/json, or a CloudEvent in binary mode (ce-* headers) or structured mode (application/cloudevents+json)"}
}

func parseJSON(body []byte, code, what string) (any, *callError) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, &callError{400, code, fmt.Sprintf("%s is not valid JSON: %v", what, err)}
	}
	return v, nil
}

func eventData(header http.Header, body []byte, mode string) (any, *callError) {
	attributes := map[string]any{}
	var data func() (any, *callError)
	if mode == "binary" {
		for _, name := range []string{"specversion", "id", "source", "type"} {
			if v := header.Get("Ce-" + name); v != "" {
				attributes[name] = v
			}
		}
		attributes["datacontenttype"] = header.Get("Content-Type")
		data = func() (any, *callError) { return parseJSON(body, "InvalidCloudEvent", "CloudEvent data") }
	} else {
		event, err := parseJSON(body, "InvalidCloudEvent", "CloudEvent")
		if err != nil {
			return nil, err
		}
		object, ok := event.(map[string]any)
		if !ok {
			return nil, &callError{400, "InvalidCloudEvent", "a structured-mode CloudEvent must be a JSON object (batches are not supported)"}
		}
		attributes = object
		data = func() (any, *callError) { return object["data"], nil }
	}
	for _, name := range []string{"id", "source", "type"} {
		if s, _ := attributes[name].(string); s == "" {
			return nil, &callError{400, "InvalidCloudEvent", fmt.Sprintf("CloudEvent attribute %q is missing", name)}
		}
	}
	if attributes["specversion"] != "1.0" {
		return nil, &callError{400, "InvalidCloudEvent", fmt.Sprintf("CloudEvent specversion %v is not supported; want \"1.0\"", attributes["specversion"])}
	}
	if attributes["type"] != EventType {
		return nil, &callError{400, "InvalidCloudEvent", fmt.Sprintf("CloudEvent type %q is not accepted; want %q", attributes["type"], EventType)}
	}
	if ct, ok := attributes["datacontenttype"].(string); ok && ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, &callError{400, "InvalidCloudEvent", fmt.Sprintf("CloudEvent datacontenttype %q is not supported; want \"application/json\"", ct)}
	}
	value, err := data()
	if err == nil && value == nil {
		err = &callError{400, "InvalidCloudEvent", "CloudEvent has no data; want a ReconcileRequest"}
	}
	return value, err
}

func nestsDeeper(v any, limit int) bool {
	if limit == 0 {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			if nestsDeeper(c, limit-1) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if nestsDeeper(c, limit-1) {
				return true
			}
		}
	}
	return false
}

func (f Function) accept(value any) (map[string]any, *callError) {
	if object, ok := value.(map[string]any); ok {
		if version, present := object["apiVersion"]; present && version != APIVersion {
			return nil, &callError{400, "UnsupportedApiVersion", fmt.Sprintf("apiVersion %q is not supported; this function speaks %s", fmt.Sprint(version), APIVersion)}
		}
	}
	if nestsDeeper(value, maxDepth) {
		return nil, &callError{400, "InvalidRequest", fmt.Sprintf("request nests deeper than %d levels", maxDepth)}
	}
	if problems := Validate(Schema(f.side()+"-request"), value); len(problems) > 0 {
		return nil, &callError{400, "InvalidRequest", fmt.Sprintf("invalid %s: %s", f.requestKind(), joinFirst(problems, 5))}
	}
	return value.(map[string]any), nil
}

func (f Function) encode(mode, reconcileID string, reply map[string]any) Reply {
	h := http.Header{}
	h.Set(ReconcileIDHeader, reconcileID)
	if mode == "json" {
		return jsonReply(200, reply, h)
	}
	attributes := map[string]any{"specversion": "1.0", "id": reconcileID, "source": "/kubeloop/functions/" + f.Name, "type": ResponseEventType, "time": time.Now().UTC().Format(time.RFC3339)}
	if mode == "structured" {
		attributes["datacontenttype"] = "application/json"
		attributes["data"] = reply
		out := jsonReply(200, attributes, h)
		out.Header.Set("Content-Type", "application/cloudevents+json; charset=utf-8")
		return out
	}
	for name, value := range attributes {
		h.Set("Ce-"+name, value.(string))
	}
	return jsonReply(200, reply, h)
}

// HandleCall answers one POST on the function path, unsigned. It never panics.
func (f Function) HandleCall(header http.Header, body []byte) Reply {
	reconcileID := header.Get(ReconcileIDHeader)
	if !reconcileIDPattern.MatchString(reconcileID) {
		reconcileID = ""
	}
	reply, err := f.handleCall(header, body, &reconcileID)
	if err != nil {
		return ErrorReply(err.status, err.code, err.message, reconcileID)
	}
	return reply
}

func (f Function) handleCall(header http.Header, body []byte, reconcileID *string) (Reply, *callError) {
	mode, err := modeOf(header)
	if err != nil {
		return Reply{}, err
	}
	if len(body) == 0 {
		return Reply{}, &callError{400, "InvalidJSON", "request body is empty; want a " + f.requestKind()}
	}
	if mode != "json" && f.Kind == "admission" {
		return Reply{}, &callError{415, "UnsupportedMediaType", "an admission function takes a plain JSON AdmissionRequest (content-type application/json), not a CloudEvent"}
	}
	if mode == "cloudevents-batch" {
		batch, err := parseJSON(body, "InvalidCloudEvent", "CloudEvents batch")
		if err != nil {
			return Reply{}, err
		}
		return f.handleBatch("cloudevents", batch)
	}
	var value any
	if mode == "json" {
		value, err = parseJSON(body, "InvalidJSON", "request body")
		if object, ok := value.(map[string]any); ok && err == nil && f.Kind != "admission" && object["kind"] == "ReconcileBatchRequest" {
			return f.handleBatch("json", value)
		}
	} else {
		value, err = eventData(header, body, mode)
	}
	if err != nil {
		return Reply{}, err
	}
	request, err := f.accept(value)
	if err != nil {
		return Reply{}, err
	}
	idField := "reconcileId"
	if f.Kind == "admission" {
		idField = "uid"
	}
	if own, _ := request[idField].(string); own != "" {
		*reconcileID = own
	} else if *reconcileID == "" {
		*reconcileID = newUUID()
	}
	reply, callErr := f.Call(request)
	if callErr != nil {
		if e, ok := callErr.(*callError); ok {
			return Reply{}, e
		}
		return Reply{}, &callError{500, "FunctionError", callErr.Error()}
	}
	out := f.encode(mode, *reconcileID, reply)
	if f.Kind != "admission" {
		out.Header.Set(BatchMaxHeader, fmt.Sprint(MaxBatchItems))
	}
	return out, nil
}

// Handle is HandleCall behind the signing gate: with keys, a request not signed with the request key of
// the audience it names (x-kubeloop-audience), fresh, is refused with 401 InvalidSignature before the
// function runs, unsigned (a signed refusal would sign any webhook-id anyone asks for); the reply to a
// verified request is signed with the reply key of that audience and the request's webhook-id.
func (f Function) Handle(header http.Header, body []byte, keys [][]byte, now time.Time) Reply {
	if len(keys) == 0 {
		return f.HandleCall(header, body)
	}
	requestID, audience, err := VerifyRequest(keys, header, body, now)
	if err != nil {
		id := header.Get(ReconcileIDHeader)
		if !reconcileIDPattern.MatchString(id) {
			id = ""
		}
		return ErrorReply(401, "InvalidSignature", err.Error(), id)
	}
	reply := f.HandleCall(header, body)
	for name, values := range SignReply(keys, audience, requestID, reply.Body, now) {
		reply.Header[name] = values
	}
	return reply
}
