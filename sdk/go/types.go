// Package kubeloop writes kubeloop functions in Go with the standard library only: the kubeloop.dev/v1
// contract's types (docs/contract.md), action helpers, an http.Handler that serves a reconcile or admission
// function (plain JSON, CloudEvents, Standard Webhooks signing, probes), and recorded fixtures.
package kubeloop

import "encoding/json"

const (
	APIVersion = "kubeloop.dev/v1"
	// EventType is the CloudEvent type of a ReconcileRequest; ResponseEventType that of the reply.
	EventType         = "dev.kubeloop.reconcile.v1"
	ResponseEventType = "dev.kubeloop.reconcile.response.v1"
)

// Object is a Kubernetes object as the API server returned it, as JSON decodes it. Decode converts it
// into a typed struct of your own.
type Object map[string]any

// ObjectTarget names one object; Namespace is empty for cluster-scoped kinds.
type ObjectTarget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// Trigger is a hint about why the function is called; an answer never depends on it.
type Trigger struct {
	Type  string        `json:"type"`
	Child *ObjectTarget `json:"child,omitempty"`
	// Related is set on RELATED triggers: the related (or required) object that changed, and its entry.
	Related *RelatedTrigger `json:"related,omitempty"`
}

// RelatedTrigger names the related entry and the object whose change called the function.
type RelatedTrigger struct {
	Name   string       `json:"name"`
	Object ObjectTarget `json:"object"`
}

// ReconcileRequest is what the router observed. Unknown fields are ignored (the contract grows additively).
type ReconcileRequest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Loop       string `json:"loop"`
	// LoopNamespace is a namespaced Loop's namespace; empty for a ClusterLoop.
	LoopNamespace string  `json:"loopNamespace,omitempty"`
	ReconcileID   string  `json:"reconcileId,omitempty"`
	Trigger       Trigger `json:"trigger"`
	Object        Object  `json:"object"`
	// Children by "<Kind>.<version>" or "<Kind>.<group>/<version>"; an owned kind without children is [].
	Children   map[string][]Object `json:"children"`
	Finalizing bool                `json:"finalizing,omitempty"`
	// Related objects by entry name (the Loop's spec.related entries and what the function required);
	// [] for an entry that matched nothing. Nil when the Loop has neither.
	Related map[string][]Object `json:"related,omitempty"`
	// Now is the router's clock (RFC 3339): a function never reads its own.
	Now string `json:"now"`
}

// PatchOperation is one RFC 6902 operation.
type PatchOperation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from,omitempty"`
	Value any    `json:"value,omitempty"`
}

// MarshalJSON keeps "value" on the operations that carry one, even when it is null, false or "".
func (o PatchOperation) MarshalJSON() ([]byte, error) {
	out := map[string]any{"op": o.Op, "path": o.Path}
	if o.From != "" {
		out["from"] = o.From
	}
	if o.Op == "add" || o.Op == "replace" || o.Op == "test" {
		out["value"] = o.Value
	}
	return json.Marshal(out)
}

// Preconditions of a delete: it happens only to the object with this uid and resourceVersion.
type Preconditions struct {
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Action is one of the six ops; build it with Patch, Create, Apply, Delete, Status or Event. It is written
// with exactly the fields of its op (actionFields), as the schema requires.
type Action struct {
	Op            string
	Target        *ObjectTarget
	Patch         []PatchOperation
	Object        Object
	Preconditions *Preconditions
	Status        map[string]any
	Type          string
	Reason        string
	Message       string
}

// actionFields: the JSON members of each op and whether each is required (the drift test checks this
// table against schemas/reconcile-response.json).
var actionFields = map[string]map[string]bool{
	"patch":  {"op": true, "target": true, "patch": true},
	"create": {"op": true, "object": true},
	"apply":  {"op": true, "object": true},
	"delete": {"op": true, "target": true, "preconditions": false},
	"status": {"op": true, "status": true},
	"event":  {"op": true, "type": true, "reason": true, "message": true},
}

func (a Action) MarshalJSON() ([]byte, error) {
	all := map[string]any{"op": a.Op, "target": a.Target, "patch": a.Patch, "object": a.Object, "preconditions": a.Preconditions, "status": a.Status, "type": a.Type, "reason": a.Reason, "message": a.Message}
	out := map[string]any{}
	for field, required := range actionFields[a.Op] {
		if required || (field == "preconditions" && a.Preconditions != nil) {
			out[field] = all[field]
		}
	}
	if a.Op == "status" && a.Status == nil {
		out["status"] = map[string]any{}
	}
	return json.Marshal(out)
}

func (a *Action) UnmarshalJSON(data []byte) error {
	var raw struct {
		Op            string           `json:"op"`
		Target        *ObjectTarget    `json:"target"`
		Patch         []PatchOperation `json:"patch"`
		Object        Object           `json:"object"`
		Preconditions *Preconditions   `json:"preconditions"`
		Status        map[string]any   `json:"status"`
		Type          string           `json:"type"`
		Reason        string           `json:"reason"`
		Message       string           `json:"message"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*a = Action(raw)
	return nil
}

// ReconcileError is a failure the function reports: "temporary" (retried) or "permanent" (not retried
// until the object changes).
type ReconcileError struct {
	Type              string   `json:"type"`
	Message           string   `json:"message"`
	RetryAfterSeconds *float64 `json:"retryAfterSeconds,omitempty"`
}

// ReconcileResponse is what the function wants done; build it with Respond.
type ReconcileResponse struct {
	APIVersion          string          `json:"apiVersion"`
	Kind                string          `json:"kind"`
	Actions             []Action        `json:"actions"`
	RequeueAfterSeconds *float64        `json:"requeueAfterSeconds,omitempty"`
	Finalized           bool            `json:"finalized,omitempty"`
	Error               *ReconcileError `json:"error,omitempty"`
	// Requires asks for objects the function needs and was not sent; they come on the next call.
	Requires []RequiredResource `json:"requires,omitempty"`
}

// RequiredResource is one entry of Requires: exactly one of Names and Selector.
type RequiredResource struct {
	Name       string         `json:"name"`
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Namespace  string         `json:"namespace,omitempty"`
	Names      []string       `json:"names,omitempty"`
	Selector   map[string]any `json:"selector,omitempty"`
}

// GroupVersionKind and GroupVersionResource as the API server's AdmissionReview carries them.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type GroupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// UserInfo of whoever made the API request.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// AdmissionRequest is what the webhook gateway sends an admission function (docs/admission.md).
type AdmissionRequest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Hook       string `json:"hook"`
	// HookNamespace is a namespaced AdmissionHook's namespace; empty for a ClusterAdmissionHook.
	HookNamespace string               `json:"hookNamespace,omitempty"`
	UID           string               `json:"uid"`
	Operation     string               `json:"operation"`
	RequestKind   GroupVersionKind     `json:"requestKind"`
	Resource      GroupVersionResource `json:"resource"`
	SubResource   string               `json:"subResource,omitempty"`
	Name          string               `json:"name,omitempty"`
	Namespace     string               `json:"namespace,omitempty"`
	Object        Object               `json:"object,omitempty"`
	OldObject     Object               `json:"oldObject,omitempty"`
	UserInfo      UserInfo             `json:"userInfo"`
	DryRun        bool                 `json:"dryRun"`
	Options       map[string]any       `json:"options,omitempty"`
	Context       map[string]Object    `json:"context"`
	Now           string               `json:"now"`
}

// AdmissionStatus is what a denied client sees.
type AdmissionStatus struct {
	Code    int    `json:"code,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

// AdmissionResponse: build it with Allow, Deny, AllowWithPatch or Mutate.
type AdmissionResponse struct {
	APIVersion       string            `json:"apiVersion"`
	Kind             string            `json:"kind"`
	Allowed          bool              `json:"allowed"`
	Status           *AdmissionStatus  `json:"status,omitempty"`
	Patch            []PatchOperation  `json:"patch,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
}
