#!/usr/bin/env python3
"""config-reloader as a kubeloop reconcile function in Python on the SDK (sdk/python), reading related objects
(docs/contract.md, "Related objects").

A Deployment annotated "kubeloop.dev/config-map: <name>" carries the hash of that ConfigMap's data in its
pod template (annotation kubeloop.dev/config-hash), so editing the ConfigMap rolls it. The Loop declares the
ConfigMap as spec.related entry "config"; it arrives in request["related"]["config"]. Same answers as the
TypeScript function (functions/config-reloader), checked by replaying test/fixtures/config-reloader.
"""
import hashlib
import json

import kubeloop

CONFIG_MAP_ANNOTATION = "kubeloop.dev/config-map"
CONFIG_HASH_ANNOTATION = "kubeloop.dev/config-hash"
RELATED_CONFIG = "config"


def config_hash(config_map):
    """sha256 of data and binaryData with sorted keys, as the TypeScript function computes it."""
    canonical = json.dumps(
        {"data": dict(sorted((config_map.get("data") or {}).items())), "binaryData": dict(sorted((config_map.get("binaryData") or {}).items()))},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


@kubeloop.function("config-reloader")
def config_reloader(request):
    """(ReconcileRequest) -> ReconcileResponse, no I/O."""
    deployment = request["object"]
    meta = deployment.get("metadata") or {}
    if meta.get("deletionTimestamp") or request["trigger"]["type"] == "DELETED":
        return kubeloop.respond([])
    name = (meta.get("annotations") or {}).get(CONFIG_MAP_ANNOTATION)
    if not name:
        return kubeloop.respond([])
    config_map = kubeloop.related_named(request, RELATED_CONFIG, name)
    if config_map is None:
        return kubeloop.respond([kubeloop.event("Warning", "ConfigMapNotFound", f"ConfigMap {name} does not exist; the pod template keeps its config hash")])
    digest = config_hash(config_map)
    template_meta = ((deployment.get("spec") or {}).get("template") or {}).get("metadata") or {}
    annotations = template_meta.get("annotations")
    if (annotations or {}).get(CONFIG_HASH_ANNOTATION) == digest:
        return kubeloop.respond([])
    if annotations is None:
        operation = {"op": "add", "path": "/spec/template/metadata/annotations", "value": {CONFIG_HASH_ANNOTATION: digest}}
    else:
        operation = {"op": "add", "path": kubeloop.pointer("spec", "template", "metadata", "annotations", CONFIG_HASH_ANNOTATION), "value": digest}
    return kubeloop.respond([kubeloop.patch(deployment, [operation]), kubeloop.event("Normal", "ConfigChanged", f"ConfigMap {name} changed: config hash {digest}")])


if __name__ == "__main__":
    kubeloop.serve(config_reloader)
