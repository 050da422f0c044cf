#!/usr/bin/env python3
"""pod-name-label as a kubeloop reconcile function in Python, standard library only (docs/contract.md).

A pod annotated "<annotation>: true" carries "<label>: <pod name>"; any other pod does not. Serves
POST / and POST /reconcile (plain JSON, or a binary-mode CloudEvent as the router sends), GET /healthz.
"""
import json
import os
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API_VERSION = "kubeloop.dev/v1"
RESPONSE_EVENT_TYPE = "dev.kubeloop.reconcile.response.v1"
MAX_LABEL_VALUE = 63
BODY_LIMIT = int(os.environ.get("KUBELOOP_BODY_LIMIT_BYTES", 8 * 1024 * 1024))
RECONCILE_ID = re.compile(r"^[!-~]{1,128}$")
QUALIFIED_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)


def setting(variable, default):
    value = os.environ.get(variable, "").strip() or default
    if not QUALIFIED_NAME.match(value):
        sys.exit(f'{variable}="{value}" is not a valid Kubernetes label/annotation key')
    return value


ANNOTATION = setting("KUBELOOP_POD_NAME_ANNOTATION", "kubeloop.dev/add-pod-name-label")
LABEL = setting("KUBELOOP_POD_NAME_LABEL", "kubeloop.dev/pod-name")


def pointer(*parts):
    """A JSON pointer; "/" in a label key is escaped as ~1 (RFC 6901)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def respond(actions, **extra):
    return {"apiVersion": API_VERSION, "kind": "ReconcileResponse", "actions": actions, **extra}


def patch(pod, operations):
    meta = pod["metadata"]
    target = {"apiVersion": pod["apiVersion"], "kind": pod["kind"], "name": meta["name"]}
    if meta.get("namespace"):
        target["namespace"] = meta["namespace"]
    # The resourceVersion test makes a patch computed from a stale read fail instead of overwriting.
    test = [{"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]}] if meta.get("resourceVersion") else []
    return {"op": "patch", "target": target, "patch": test + operations}


def reconcile(request):
    """The whole function: (ReconcileRequest) -> ReconcileResponse, no I/O."""
    pod = request["object"]
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp") or request["trigger"]["type"] == "DELETED":
        return respond([])
    name = meta.get("name")
    if not name:
        return respond([], error={"type": "permanent", "message": "the pod has no metadata.name"})
    labels = meta.get("labels")
    wanted = (meta.get("annotations") or {}).get(ANNOTATION) == "true"
    current = (labels or {}).get(LABEL)
    if wanted:
        if current == name:
            return respond([])
        if len(name) > MAX_LABEL_VALUE:
            message = f"{name} is {len(name)} characters long; the {LABEL} label holds at most {MAX_LABEL_VALUE}"
            return respond([{"op": "event", "type": "Warning", "reason": "PodNameTooLong", "message": message}])
        if labels is None:
            return respond([patch(pod, [{"op": "add", "path": "/metadata/labels", "value": {LABEL: name}}])])
        # "add" sets a member whether or not it exists (RFC 6902 4.1).
        return respond([patch(pod, [{"op": "add", "path": pointer("metadata", "labels", LABEL), "value": name}])])
    if current is None:
        return respond([])
    return respond([patch(pod, [{"op": "remove", "path": pointer("metadata", "labels", LABEL)}])])


def request_problem(value):
    """Why a body is not a ReconcileRequest this function can use, or None."""
    if not isinstance(value, dict):
        return "want a JSON object"
    if value.get("apiVersion") != API_VERSION or value.get("kind") != "ReconcileRequest":
        return f'want apiVersion "{API_VERSION}" and kind "ReconcileRequest"'
    obj = value.get("object")
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return "object.metadata is required"
    if not isinstance(value.get("trigger"), dict) or not isinstance(value["trigger"].get("type"), str):
        return "trigger.type is required"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pod-name-label-python"
    # Headers and body are written separately: without TCP_NODELAY each reply waits for a delayed ACK.
    disable_nagle_algorithm = True

    def reply(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, code, message):
        self.reply(status, {"statusCode": status, "code": code, "message": message})

    def do_GET(self):
        if self.path in ("/healthz", "/readyz"):
            return self.reply(200, {"status": "ok"})
        if self.path in ("/", "/reconcile"):
            return self.error(405, "MethodNotAllowed", f"GET {self.path} is not allowed; POST a ReconcileRequest")
        self.error(404, "NotFound", f"no route GET {self.path}")

    def do_POST(self):
        if self.path not in ("/", "/reconcile"):
            return self.error(404, "NotFound", f"no route POST {self.path}")
        length = int(self.headers.get("content-length") or 0)
        if length > BODY_LIMIT:
            self.close_connection = True
            return self.error(413, "PayloadTooLarge", f"request body is larger than the limit of {BODY_LIMIT} bytes")
        body = self.rfile.read(length)
        media = (self.headers.get("content-type") or "").split(";")[0].strip().lower()
        if media != "application/json":
            return self.error(415, "UnsupportedMediaType", f'content type "{media}" is not supported; send application/json')
        try:
            request = json.loads(body)
        except ValueError as error:
            return self.error(400, "InvalidJSON", f"request body is not valid JSON: {error}")
        problem = request_problem(request)
        if problem:
            return self.error(400, "InvalidRequest", f"invalid ReconcileRequest: {problem}")
        reconcile_id = request.get("reconcileId")
        headers = {"x-kubeloop-reconcile-id": reconcile_id} if isinstance(reconcile_id, str) and RECONCILE_ID.match(reconcile_id) else {}
        if self.headers.get("ce-specversion"):
            # Binary-mode CloudEvent in, binary-mode CloudEvent out (the router sends this mode).
            headers.update({"ce-specversion": "1.0", "ce-id": self.headers.get("ce-id", reconcile_id or "reply"),
                            "ce-source": "/kubeloop/functions/pod-name-label-python", "ce-type": RESPONSE_EVENT_TYPE})
        try:
            response = reconcile(request)
        except Exception as error:  # a bug here must be a 500 with a message, never a dropped connection
            return self.error(500, "FunctionError", f"pod-name-label threw: {error!r}")
        self.reply(200, response, headers)

    def log_message(self, format, *args):
        if os.environ.get("KUBELOOP_LOG_LEVEL", "info") in ("debug", "trace"):
            super().log_message(format, *args)


def main():
    host = os.environ.get("HOST", "0.0.0.0")
    server = ThreadingHTTPServer((host, int(os.environ.get("PORT", "8080"))), Handler)
    # SIGTERM (kubelet, kubeloop tests): stop accepting, finish the request in flight, exit 0.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"listening on http://{host}:{server.server_address[1]}", flush=True)
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    main()
