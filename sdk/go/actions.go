package kubeloop

import (
	"reflect"
	"sort"
	"strings"
)

// Pointer is a JSON pointer (RFC 6901): "/" in a key is written ~1, "~" is ~0.
func Pointer(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// Diff returns the RFC 6902 operations that turn before into after: maps member by member, anything
// else replaced whole.
func Diff(before, after any) []PatchOperation { return diffAt("", before, after) }

func diffAt(path string, before, after any) []PatchOperation {
	b, bok := asMap(before)
	a, aok := asMap(after)
	if !bok || !aok {
		if reflect.DeepEqual(before, after) {
			return nil
		}
		return []PatchOperation{{Op: "replace", Path: path, Value: after}}
	}
	var ops []PatchOperation
	for _, key := range sortedKeys(b) {
		if _, ok := a[key]; !ok {
			ops = append(ops, PatchOperation{Op: "remove", Path: path + Pointer(key)})
		}
	}
	for _, key := range sortedKeys(a) {
		if old, ok := b[key]; ok {
			ops = append(ops, diffAt(path+Pointer(key), old, a[key])...)
		} else {
			ops = append(ops, PatchOperation{Op: "add", Path: path + Pointer(key), Value: a[key]})
		}
	}
	return ops
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case Object:
		return m, true
	}
	return nil, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Patch is a patch action on obj, guarded by a test of its resourceVersion so a patch computed from a
// stale read fails (the router requeues) instead of overwriting someone else's change.
func Patch(obj Object, ops ...PatchOperation) Action {
	guarded := []PatchOperation{}
	if rv := obj.ResourceVersion(); rv != "" {
		guarded = append(guarded, PatchOperation{Op: "test", Path: "/metadata/resourceVersion", Value: rv})
	}
	target := obj.Target()
	return Action{Op: "patch", Target: &target, Patch: append(guarded, ops...)}
}

// PatchAction calls mutate on a deep copy of obj and returns the patch from obj to it, or nil when
// nothing changed (an object already right gets no action).
func PatchAction(obj Object, mutate func(draft Object)) *Action {
	draft := obj.DeepCopy()
	mutate(draft)
	ops := Diff(map[string]any(obj.DeepCopy()), map[string]any(draft))
	if len(ops) == 0 {
		return nil
	}
	action := Patch(obj, ops...)
	return &action
}

func Create(obj Object) Action { return Action{Op: "create", Object: obj} }

// Apply is server-side apply (idempotent; the router's field manager is kubeloop/<loop>).
func Apply(obj Object) Action { return Action{Op: "apply", Object: obj} }

// Delete deletes obj only if it is still the object seen (uid and resourceVersion preconditions).
func Delete(obj Object) Action {
	target := obj.Target()
	action := Action{Op: "delete", Target: &target}
	if obj.UID() != "" || obj.ResourceVersion() != "" {
		action.Preconditions = &Preconditions{UID: obj.UID(), ResourceVersion: obj.ResourceVersion()}
	}
	return action
}

// Status writes the primary's whole .status.
func Status(desired map[string]any) Action { return Action{Op: "status", Status: desired} }

// StatusAction is Status, or nil when the primary's status already is desired (no write, no new call).
func StatusAction(obj Object, desired map[string]any) *Action {
	current, _ := ToObject(obj["status"])
	wanted, _ := ToObject(desired)
	if obj["status"] != nil && reflect.DeepEqual(current, wanted) {
		return nil
	}
	action := Status(desired)
	return &action
}

// Event is a Kubernetes Event on the primary: eventType "Normal" or "Warning", a CamelCase reason.
func Event(eventType, reason, message string) Action {
	return Action{Op: "event", Type: eventType, Reason: reason, Message: message}
}

// ControllerReference makes owner the controller of a child (garbage collection, the router's authority).
func ControllerReference(owner Object) map[string]any {
	return map[string]any{"apiVersion": owner.APIVersion(), "kind": owner.Kind(), "name": owner.Name(), "uid": owner.UID(), "controller": true, "blockOwnerDeletion": true}
}

// Respond builds a ReconcileResponse; nil actions (from PatchAction, StatusAction) are dropped.
func Respond(actions ...any) *ReconcileResponse {
	out := &ReconcileResponse{APIVersion: APIVersion, Kind: "ReconcileResponse", Actions: []Action{}}
	for _, a := range actions {
		switch action := a.(type) {
		case Action:
			out.Actions = append(out.Actions, action)
		case *Action:
			if action != nil {
				out.Actions = append(out.Actions, *action)
			}
		case []Action:
			out.Actions = append(out.Actions, action...)
		case nil:
		default:
			panic("kubeloop.Respond takes Action, *Action or []Action values")
		}
	}
	return out
}

// RequeueAfter asks for one more call after this many seconds.
func (r *ReconcileResponse) RequeueAfter(seconds float64) *ReconcileResponse {
	r.RequeueAfterSeconds = &seconds
	return r
}

// WithError reports a failure; the actions are still applied.
func (r *ReconcileResponse) WithError(err ReconcileError) *ReconcileResponse {
	r.Error = &err
	return r
}

// TemporaryError is retried after retryAfterSeconds (when > 0) or with backoff.
func TemporaryError(message string, retryAfterSeconds float64) ReconcileError {
	e := ReconcileError{Type: "temporary", Message: message}
	if retryAfterSeconds > 0 {
		e.RetryAfterSeconds = &retryAfterSeconds
	}
	return e
}

// PermanentError is not retried until the object changes (an invalid spec).
func PermanentError(message string) ReconcileError {
	return ReconcileError{Type: "permanent", Message: message}
}

func admissionResponse(allowed bool) *AdmissionResponse {
	return &AdmissionResponse{APIVersion: APIVersion, Kind: "AdmissionResponse", Allowed: allowed}
}

// Allow admits the request.
func Allow(warnings ...string) *AdmissionResponse {
	r := admissionResponse(true)
	r.Warnings = warnings
	return r
}

// Deny refuses the request; the client sees message (HTTP code, 403 when 0).
func Deny(message string, code int) *AdmissionResponse {
	r := admissionResponse(false)
	r.Status = &AdmissionStatus{Code: code, Message: message}
	return r
}

// AllowWithPatch admits with RFC 6902 operations against request.Object (mutating hooks only).
func AllowWithPatch(ops []PatchOperation, warnings ...string) *AdmissionResponse {
	r := Allow(warnings...)
	if len(ops) > 0 {
		r.Patch = ops
	}
	return r
}

// Mutate admits with the patch change makes to a copy of the object; no patch when it is already right.
func Mutate(request *AdmissionRequest, change func(draft Object), warnings ...string) *AdmissionResponse {
	draft := request.Object.DeepCopy()
	change(draft)
	return AllowWithPatch(Diff(map[string]any(request.Object.DeepCopy()), map[string]any(draft)), warnings...)
}
