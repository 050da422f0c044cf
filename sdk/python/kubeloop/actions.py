"""Building a reply: the six reconcile actions (patch, create, apply, delete, status, event), respond(),
and the admission answers (allow, deny, allow_with_patch, mutate). Plain dicts, as they go on the wire."""
import copy

API_VERSION = "kubeloop.dev/v1"


def pointer(*parts):
    """A JSON pointer (RFC 6901): "/" in a key is written ~1, "~" is ~0."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def target_of(obj):
    """{apiVersion, kind, namespace?, name} of an object."""
    meta = obj.get("metadata") or {}
    target = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"]}
    if meta.get("namespace"):
        target["namespace"] = meta["namespace"]
    return target


def diff(before, after, path=""):
    """RFC 6902 operations that turn `before` into `after`: maps member by member, anything else whole."""
    if isinstance(before, dict) and isinstance(after, dict):
        operations = []
        for key in before:
            if key not in after:
                operations.append({"op": "remove", "path": path + pointer(key)})
        for key, value in after.items():
            if key not in before:
                operations.append({"op": "add", "path": path + pointer(key), "value": value})
            else:
                operations.extend(diff(before[key], value, path + pointer(key)))
        return operations
    return [] if before == after else [{"op": "replace", "path": path, "value": after}]


def _guarded(obj, operations):
    # The resourceVersion test makes a patch computed from a stale read fail (the router requeues) instead
    # of overwriting someone else's change.
    version = (obj.get("metadata") or {}).get("resourceVersion")
    return ([{"op": "test", "path": "/metadata/resourceVersion", "value": version}] if version else []) + operations


def patch(obj, operations):
    """A patch action on `obj` with these RFC 6902 operations, guarded by a resourceVersion test."""
    return {"op": "patch", "target": target_of(obj), "patch": _guarded(obj, list(operations))}


def patch_action(obj, mutate):
    """Calls mutate(draft) on a deep copy of `obj` and returns the patch from `obj` to the draft, or None
    when mutate changed nothing (so an object already right gets no action)."""
    draft = copy.deepcopy(obj)
    mutate(draft)
    operations = diff(obj, draft)
    return patch(obj, operations) if operations else None


def create(obj):
    return {"op": "create", "object": obj}


def apply(obj):
    """Server-side apply (idempotent; the router's field manager is kubeloop/<loop>)."""
    return {"op": "apply", "object": obj}


def delete(obj):
    """Deletes `obj`, only if it is still the object seen (uid and resourceVersion preconditions)."""
    meta = obj.get("metadata") or {}
    preconditions = {k: meta[k] for k in ("uid", "resourceVersion") if meta.get(k)}
    action = {"op": "delete", "target": target_of(obj)}
    if preconditions:
        action["preconditions"] = preconditions
    return action


def status(desired):
    """Writes the primary's whole .status."""
    return {"op": "status", "status": desired}


def status_action(obj, desired):
    """A status action, or None when the primary's status is already `desired` (no write, no new call)."""
    return None if obj.get("status") == desired else status(desired)


def event(type_, reason, message):
    """A Kubernetes Event on the primary: type "Normal" or "Warning", a CamelCase reason."""
    return {"op": "event", "type": type_, "reason": reason, "message": message}


def controller_reference(owner):
    """The ownerReference that makes `owner` the controller of a child (garbage collection, authority)."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def respond(actions=(), requeue_after_seconds=None, finalized=None, error=None, requires=None):
    """A ReconcileResponse; None entries in `actions` (say, from patch_action) are dropped. `requires`: entries
    from kubeloop.requires(...), objects to be sent on the next call (docs/contract.md, "Asking for objects")."""
    response = {"apiVersion": API_VERSION, "kind": "ReconcileResponse", "actions": [a for a in actions if a is not None]}
    if requeue_after_seconds is not None:
        response["requeueAfterSeconds"] = requeue_after_seconds
    if finalized is not None:
        response["finalized"] = finalized
    if error is not None:
        response["error"] = error
    if requires:
        response["requires"] = list(requires)
    return response


def temporary_error(message, retry_after_seconds=None):
    """For respond(error=...): retried, after retry_after_seconds or with backoff."""
    error = {"type": "temporary", "message": message}
    if retry_after_seconds is not None:
        error["retryAfterSeconds"] = retry_after_seconds
    return error


def permanent_error(message):
    """For respond(error=...): not retried until the object changes (an invalid spec)."""
    return {"type": "permanent", "message": message}


def _admission(allowed, warnings=None, audit_annotations=None, **fields):
    reply = {"apiVersion": API_VERSION, "kind": "AdmissionResponse", "allowed": allowed, **fields}
    if warnings:
        reply["warnings"] = list(warnings)
    if audit_annotations:
        reply["auditAnnotations"] = dict(audit_annotations)
    return reply


def allow(warnings=None, audit_annotations=None):
    return _admission(True, warnings, audit_annotations)


def deny(message, code=None, reason=None, warnings=None, audit_annotations=None):
    """Refuses the request; the client sees `message` (HTTP `code`, 403 when omitted). Audit annotations are
    recorded under "<hook>.kubeloop.dev/<key>"."""
    status_ = {"message": message}
    if code is not None:
        status_["code"] = code
    if reason is not None:
        status_["reason"] = reason
    return _admission(False, warnings, audit_annotations, status=status_)


def allow_with_patch(operations, warnings=None):
    """Admits with RFC 6902 operations against request["object"] (mutating hooks only)."""
    operations = list(operations)
    return _admission(True, warnings, patch=operations) if operations else _admission(True, warnings)


def mutate(request, change, warnings=None):
    """Admits with the patch change(draft) makes to a copy of the object; no patch when it is already right."""
    draft = copy.deepcopy(request["object"])
    change(draft)
    return allow_with_patch(diff(request["object"], draft), warnings)
