#!/usr/bin/env python3
"""config-reloader as a kubeloop reconcile function in Python, reading related objects (docs/contract.md).

A Deployment annotated "kubeloop.dev/config-map: <name>" carries the hash of that ConfigMap's data in its
pod template (annotation kubeloop.dev/config-hash), so editing the ConfigMap rolls it. The Loop declares the
ConfigMap as spec.related entry "config"; it arrives in request["related"]["config"]. Same answers as the
TypeScript function (functions/config-reloader), checked by replaying test/fixtures/config-reloader.

The HTTP serving is the pod-name-label sample's (standard library only) until the Python SDK serves both.
"""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pod-name-label"))
import pod_name_label as server  # noqa: E402  (the sample's HTTP server, reused)

CONFIG_MAP_ANNOTATION = "kubeloop.dev/config-map"
CONFIG_HASH_ANNOTATION = "kubeloop.dev/config-hash"
RELATED_CONFIG = "config"


def related_of(request, name):
    """The objects sent under a related entry; [] when none matches or the entry was not sent."""
    return (request.get("related") or {}).get(name) or []


def config_hash(config_map):
    """sha256 of data and binaryData with sorted keys, as the TypeScript function computes it."""
    canonical = json.dumps(
        {"data": dict(sorted((config_map.get("data") or {}).items())), "binaryData": dict(sorted((config_map.get("binaryData") or {}).items()))},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def event(kind, reason, message):
    return {"op": "event", "type": kind, "reason": reason, "message": message}


def reconcile(request):
    """(ReconcileRequest) -> ReconcileResponse, no I/O."""
    deployment = request["object"]
    meta = deployment.get("metadata") or {}
    if meta.get("deletionTimestamp") or request["trigger"]["type"] == "DELETED":
        return server.respond([])
    name = (meta.get("annotations") or {}).get(CONFIG_MAP_ANNOTATION)
    if not name:
        return server.respond([])
    config_map = next((o for o in related_of(request, RELATED_CONFIG) if (o.get("metadata") or {}).get("name") == name), None)
    if config_map is None:
        return server.respond([event("Warning", "ConfigMapNotFound", f"ConfigMap {name} does not exist; the pod template keeps its config hash")])
    digest = config_hash(config_map)
    template_meta = ((deployment.get("spec") or {}).get("template") or {}).get("metadata") or {}
    annotations = template_meta.get("annotations")
    if (annotations or {}).get(CONFIG_HASH_ANNOTATION) == digest:
        return server.respond([])
    if annotations is None:
        operation = {"op": "add", "path": "/spec/template/metadata/annotations", "value": {CONFIG_HASH_ANNOTATION: digest}}
    else:
        operation = {"op": "add", "path": server.pointer("spec", "template", "metadata", "annotations", CONFIG_HASH_ANNOTATION), "value": digest}
    return server.respond([server.patch(deployment, [operation]), event("Normal", "ConfigChanged", f"ConfigMap {name} changed: config hash {digest}")])


if __name__ == "__main__":
    server.reconcile = reconcile
    server.main()
