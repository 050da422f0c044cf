// pod-name-label as a kubeloop reconcile function in Go, standard library only (docs/contract.md).
//
// A pod annotated "<annotation>: true" carries "<label>: <pod name>"; any other pod does not. Serves
// POST / and POST /reconcile (plain JSON, or a binary-mode CloudEvent as the router sends), GET /healthz.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"mime"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	apiVersion        = "kubeloop.dev/v1"
	responseEventType = "dev.kubeloop.reconcile.response.v1"
	maxLabelValue     = 63
)

var (
	reconcileIDPattern = regexp.MustCompile(`^[!-~]{1,128}$`)
	qualifiedName      = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
)

// The parts of a ReconcileRequest this function reads; everything else passes through untouched.
type metadata struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	DeletionTimestamp *string           `json:"deletionTimestamp,omitempty"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
}

type object struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   *metadata `json:"metadata"`
}

type reconcileRequest struct {
	APIVersion  string `json:"apiVersion"`
	Kind        string `json:"kind"`
	ReconcileID string `json:"reconcileId"`
	Trigger     *struct {
		Type string `json:"type"`
	} `json:"trigger"`
	Object *object `json:"object"`
}

type action map[string]any

type reconcileResponse struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Actions    []action          `json:"actions"`
	Error      map[string]string `json:"error,omitempty"`
}

type config struct{ annotation, label string }

func respond(actions ...action) reconcileResponse {
	return reconcileResponse{APIVersion: apiVersion, Kind: "ReconcileResponse", Actions: append([]action{}, actions...)}
}

// pointer is a JSON pointer; "/" in a label key is escaped as ~1 (RFC 6901).
func pointer(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func patch(pod *object, ops ...action) action {
	target := map[string]string{"apiVersion": pod.APIVersion, "kind": pod.Kind, "name": pod.Metadata.Name}
	if pod.Metadata.Namespace != "" {
		target["namespace"] = pod.Metadata.Namespace
	}
	// The resourceVersion test makes a patch computed from a stale read fail instead of overwriting.
	all := []action{}
	if pod.Metadata.ResourceVersion != "" {
		all = append(all, action{"op": "test", "path": "/metadata/resourceVersion", "value": pod.Metadata.ResourceVersion})
	}
	return action{"op": "patch", "target": target, "patch": append(all, ops...)}
}

// reconcile is the whole function: (ReconcileRequest) -> ReconcileResponse, no I/O.
func reconcile(req *reconcileRequest, cfg config) reconcileResponse {
	pod := req.Object
	meta := pod.Metadata
	if meta.DeletionTimestamp != nil || req.Trigger.Type == "DELETED" {
		return respond()
	}
	if meta.Name == "" {
		r := respond()
		r.Error = map[string]string{"type": "permanent", "message": "the pod has no metadata.name"}
		return r
	}
	current, labelled := meta.Labels[cfg.label]
	if meta.Annotations[cfg.annotation] == "true" {
		switch {
		case labelled && current == meta.Name:
			return respond()
		case len(meta.Name) > maxLabelValue:
			msg := fmt.Sprintf("pod %s: a %d-character name does not fit label %s (at most %d)", meta.Name, len(meta.Name), cfg.label, maxLabelValue)
			return respond(action{"op": "event", "type": "Warning", "reason": "PodNameTooLong", "message": msg})
		case meta.Labels == nil:
			return respond(patch(pod, action{"op": "add", "path": "/metadata/labels", "value": map[string]string{cfg.label: meta.Name}}))
		case labelled:
			return respond(patch(pod, action{"op": "replace", "path": pointer("metadata", "labels", cfg.label), "value": meta.Name}))
		default:
			return respond(patch(pod, action{"op": "add", "path": pointer("metadata", "labels", cfg.label), "value": meta.Name}))
		}
	}
	if !labelled {
		return respond()
	}
	return respond(patch(pod, action{"op": "remove", "path": pointer("metadata", "labels", cfg.label)}))
}

func requestProblem(req *reconcileRequest) string {
	switch {
	case req.APIVersion != apiVersion || req.Kind != "ReconcileRequest":
		return fmt.Sprintf("want apiVersion %q and kind \"ReconcileRequest\"", apiVersion)
	case req.Object == nil || req.Object.Metadata == nil:
		return "object.metadata is required"
	case req.Trigger == nil || req.Trigger.Type == "":
		return "trigger.type is required"
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("content-type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]any{"statusCode": status, "code": code, "message": message})
}

func handler(cfg config, bodyLimit int64) http.Handler {
	mux := http.NewServeMux()
	health := func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) }
	mux.HandleFunc("GET /healthz", health)
	mux.HandleFunc("GET /readyz", health)
	reconcileHandler := func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeError(w, 405, "MethodNotAllowed", fmt.Sprintf("%s %s is not allowed; POST a ReconcileRequest", r.Method, r.URL.Path))
			return
		}
		if media, _, _ := mime.ParseMediaType(r.Header.Get("content-type")); media != "application/json" {
			writeError(w, 415, "UnsupportedMediaType", fmt.Sprintf("content type %q is not supported; send application/json", media))
			return
		}
		var req reconcileRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, bodyLimit)).Decode(&req); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeError(w, 413, "PayloadTooLarge", fmt.Sprintf("request body is larger than the limit of %d bytes", bodyLimit))
			} else {
				writeError(w, 400, "InvalidJSON", "request body is not a valid ReconcileRequest: "+err.Error())
			}
			return
		}
		if problem := requestProblem(&req); problem != "" {
			writeError(w, 400, "InvalidRequest", "invalid ReconcileRequest: "+problem)
			return
		}
		if reconcileIDPattern.MatchString(req.ReconcileID) {
			w.Header().Set("x-kubeloop-reconcile-id", req.ReconcileID)
		}
		if r.Header.Get("ce-specversion") != "" {
			// Binary-mode CloudEvent in, binary-mode CloudEvent out (the router sends this mode).
			w.Header().Set("ce-specversion", "1.0")
			w.Header().Set("ce-id", r.Header.Get("ce-id"))
			w.Header().Set("ce-source", "/kubeloop/functions/pod-name-label-go")
			w.Header().Set("ce-type", responseEventType)
		}
		writeJSON(w, 200, reconcile(&req, cfg))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			writeError(w, 404, "NotFound", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
			return
		}
		reconcileHandler(w, r)
	})
	mux.HandleFunc("/reconcile", reconcileHandler)
	return mux
}

func setting(name, fallback string) string {
	if value := strings.TrimSpace(os.Getenv(name)); value != "" {
		return value
	}
	return fallback
}

func labelKey(name, fallback string) string {
	value := setting(name, fallback)
	if !qualifiedName.MatchString(value) {
		log.Fatalf("%s=%q is not a valid Kubernetes label/annotation key", name, value)
	}
	return value
}

func main() {
	cfg := config{
		annotation: labelKey("KUBELOOP_POD_NAME_ANNOTATION", "kubeloop.dev/add-pod-name-label"),
		label:      labelKey("KUBELOOP_POD_NAME_LABEL", "kubeloop.dev/pod-name"),
	}
	bodyLimit, err := strconv.ParseInt(setting("KUBELOOP_BODY_LIMIT_BYTES", "8388608"), 10, 64)
	if err != nil || bodyLimit < 1024 {
		log.Fatalf("KUBELOOP_BODY_LIMIT_BYTES: want an integer of at least 1024")
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(setting("HOST", "0.0.0.0"), setting("PORT", "8080")))
	if err != nil {
		log.Fatal(err)
	}
	server := &http.Server{Handler: handler(cfg, bodyLimit), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s\n", listener.Addr())
	// SIGTERM (kubelet, kubeloop tests): stop accepting, finish requests in flight, exit 0.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
