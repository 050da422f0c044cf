"""The request path every transport shares (docs/contract.md, "Transport"): content negotiation, CloudEvents
binary and structured mode, the signing gate, contract validation, the call, the reply in the request's mode,
and the JSON error replies with their stable codes. Pure: bytes and headers in, status, headers, bytes out."""
import json
import re
import time
import uuid

from . import signing
from .schema import load_schema, validate

API_VERSION = "kubeloop.dev/v1"
EVENT_TYPE = "dev.kubeloop.reconcile.v1"
RESPONSE_EVENT_TYPE = "dev.kubeloop.reconcile.response.v1"
ERROR_EVENT_TYPE = "dev.kubeloop.reconcile.error.v1"
RECONCILE_ID_HEADER = "x-kubeloop-reconcile-id"
BATCH_MAX_HEADER = "x-kubeloop-batch-max"
BATCH_MEDIA_TYPE = "application/cloudevents-batch+json"
MAX_BATCH_ITEMS = 64
DEFAULT_BODY_LIMIT = 8 * 1024 * 1024
MAX_DEPTH = 64
_RECONCILE_ID = re.compile(r"^[!-~]{1,128}\Z")
_SCHEMAS = {}


def _schema(name):
    if name not in _SCHEMAS:
        _SCHEMAS[name] = load_schema(name)
    return _SCHEMAS[name]


class RequestError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status = status
        self.code = code


def _json_reply(status, body, headers=None):
    return status, {"content-type": "application/json; charset=utf-8", **(headers or {})}, json.dumps(body).encode()


def error_reply(status, code, message, reconcile_id=None):
    """{statusCode, code, message, reconcileId}: what every 4xx and 5xx of the reconcile path carries."""
    reconcile_id = reconcile_id or str(uuid.uuid4())
    body = {"statusCode": status, "code": code, "message": message, "reconcileId": reconcile_id}
    return _json_reply(status, body, {RECONCILE_ID_HEADER: reconcile_id})


def _media_type(headers):
    return headers.get("content-type", "").split(";")[0].strip().lower()


def _mode(headers):
    media = _media_type(headers)
    if media == "application/cloudevents+json":
        return "structured"
    if media == BATCH_MEDIA_TYPE:
        return "cloudevents-batch"
    if media == "application/json":
        return "binary" if "ce-specversion" in headers else "json"
    shown = f'content type "{media}"' if media else "no content type"
    raise RequestError(415, "UnsupportedMediaType", f"{shown} is not supported; send application/json, or a CloudEvent in binary mode (ce-* headers) or structured mode (application/cloudevents+json)")


def _parse(text, what):
    try:
        return json.loads(text)
    except ValueError as error:
        raise RequestError(400, "InvalidJSON" if what == "request" else "InvalidCloudEvent", f"{what} body is not valid JSON: {error}") from None


def _event_data(headers, body, mode, event=None):
    """The ReconcileRequest inside a CloudEvent, after checking its attributes (`event`: one already parsed
    event of a batch)."""
    if event is not None:
        if not isinstance(event, dict):
            raise RequestError(400, "InvalidCloudEvent", "a batch item must be a structured-mode CloudEvent (a JSON object)")
        attributes = event
        data = lambda: event.get("data")  # noqa: E731
    elif mode == "binary":
        attributes = {name: headers.get("ce-" + name) for name in ("specversion", "id", "source", "type")}
        attributes["datacontenttype"] = headers.get("content-type")
        data = lambda: _parse(body, "CloudEvent data")  # noqa: E731
    else:
        event = _parse(body, "CloudEvent")
        if isinstance(event, list):
            raise RequestError(400, "InvalidCloudEvent", "CloudEvent batches are not supported; send one event per request")
        if not isinstance(event, dict):
            raise RequestError(400, "InvalidCloudEvent", "a structured-mode CloudEvent must be a JSON object")
        attributes = event
        data = lambda: event.get("data")  # noqa: E731
    for name in ("id", "source", "type"):
        if not isinstance(attributes.get(name), str) or not attributes[name]:
            raise RequestError(400, "InvalidCloudEvent", f'CloudEvent attribute "{name}" is missing')
    if attributes.get("specversion") != "1.0":
        raise RequestError(400, "InvalidCloudEvent", f'CloudEvent specversion "{attributes.get("specversion")}" is not supported; want "1.0"')
    if attributes["type"] != EVENT_TYPE:
        raise RequestError(400, "InvalidCloudEvent", f'CloudEvent type "{attributes["type"]}" is not accepted; want "{EVENT_TYPE}"')
    content_type = attributes.get("datacontenttype")
    if content_type is not None and not str(content_type).startswith("application/json"):
        raise RequestError(400, "InvalidCloudEvent", f'CloudEvent datacontenttype "{content_type}" is not supported; want "application/json"')
    value = data()
    if value is None:
        raise RequestError(400, "InvalidCloudEvent", "CloudEvent has no data; want a ReconcileRequest")
    return value


def _depth(value, limit):
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return False


def _accept(function, value):
    if isinstance(value, dict) and "apiVersion" in value and value["apiVersion"] != API_VERSION:
        raise RequestError(400, "UnsupportedApiVersion", f"apiVersion {json.dumps(value['apiVersion'])} is not supported; this function speaks {API_VERSION}")
    if _depth(value, MAX_DEPTH):
        raise RequestError(400, "InvalidRequest", f"request nests deeper than {MAX_DEPTH} levels")
    kind = "admission" if function.kind == "admission" else "reconcile"
    errors = validate(_schema(f"{kind}-request"), value)
    if errors:
        raise RequestError(400, "InvalidRequest", f"invalid {function.request_kind}: {'; '.join(errors[:5])}")
    return value


def _call(function, request):
    try:
        response = function.call(request)
    except Exception as error:  # the function's own failure is a 500 with its message, never a crash
        raise RequestError(500, "FunctionError", f"function {function.name} threw: {error!r}") from error
    kind = "admission" if function.kind == "admission" else "reconcile"
    errors = validate(_schema(f"{kind}-response"), response)
    if not errors and function.admission_type == "validating" and response.get("patch"):
        errors = ["a validating function may not return a patch"]
    if errors:
        name = "AdmissionResponse" if function.kind == "admission" else "ReconcileResponse"
        raise RequestError(500, "InvalidResponse", f"function {function.name} returned an invalid {name}: {'; '.join(errors[:5])}")
    return response


def _encode(function, mode, reconcile_id, response):
    if mode == "json":
        return _json_reply(200, response, {RECONCILE_ID_HEADER: reconcile_id})
    attributes = {
        "specversion": "1.0",
        "id": reconcile_id,
        "source": f"/kubeloop/functions/{function.name}",
        "type": RESPONSE_EVENT_TYPE,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if mode == "structured":
        event = {**attributes, "datacontenttype": "application/json", "data": response}
        return 200, {"content-type": "application/cloudevents+json; charset=utf-8", RECONCILE_ID_HEADER: reconcile_id}, json.dumps(event).encode()
    headers = {"ce-" + name: value for name, value in attributes.items()}
    return _json_reply(200, response, {**headers, RECONCILE_ID_HEADER: reconcile_id})


def _batch_items(fmt, value):
    """(id, value) of each item of a batch; a batch that is not one (no list, no ids, an id twice) is a 400."""
    code = "InvalidRequest" if fmt == "json" else "InvalidCloudEvent"
    if fmt == "json":
        if value.get("apiVersion") not in (None, API_VERSION):
            raise RequestError(400, code, f"batch apiVersion {json.dumps(value.get('apiVersion'))} is not supported; want {API_VERSION}")
        items = value.get("items")
        if not isinstance(items, list):
            raise RequestError(400, code, "a ReconcileBatchRequest needs items: a list of ReconcileRequests")
    else:
        items = value
        if not isinstance(items, list):
            raise RequestError(400, code, "a CloudEvents batch must be a JSON array of structured-mode events")
    if not items:
        raise RequestError(400, code, "the batch has no items")
    if len(items) > MAX_BATCH_ITEMS:
        raise RequestError(400, code, f"the batch has {len(items)} items; at most {MAX_BATCH_ITEMS} are accepted")
    seen, out = set(), []
    for index, item in enumerate(items):
        item_id = item.get("reconcileId" if fmt == "json" else "id") if isinstance(item, dict) else None
        if not isinstance(item_id, str) or not item_id:
            raise RequestError(400, code, f"batch item {index} has no {'reconcileId' if fmt == 'json' else 'CloudEvent id'}; every item of a batch needs one")
        if item_id in seen:
            raise RequestError(400, code, f"batch items {json.dumps(item_id)} appear twice; ids must be unique in a batch")
        seen.add(item_id)
        out.append((item_id, item))
    return out


def _handle_batch(function, fmt, value):
    """Each item accepted, called and checked alone; an item's failure is its own entry, never the others'."""
    answers = []
    for item_id, item in _batch_items(fmt, value):
        try:
            request = _event_data(None, None, "structured", event=item) if fmt == "cloudevents" else item
            answers.append((item_id, _call(function, _accept(function, request)), None))
        except RequestError as error:
            answers.append((item_id, None, {"statusCode": error.status, "code": error.code, "message": str(error)}))
    if fmt == "json":
        items = [{"reconcileId": i, "error": e} if e else {"reconcileId": i, "response": r} for i, r, e in answers]
        return _json_reply(200, {"apiVersion": API_VERSION, "kind": "ReconcileBatchResponse", "items": items})
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    source = f"/kubeloop/functions/{function.name}"
    events = [
        {"specversion": "1.0", "id": i, "source": source, "type": ERROR_EVENT_TYPE if e else RESPONSE_EVENT_TYPE, "time": now,
         "datacontenttype": "application/json", "data": {**e, "reconcileId": i} if e else r}
        for i, r, e in answers
    ]
    return 200, {"content-type": BATCH_MEDIA_TYPE + "; charset=utf-8"}, json.dumps(events).encode()


def handle_call(function, headers, body):
    """One POST on the function path, unsigned: (status, headers, body). Never raises."""
    reconcile_id = headers.get(RECONCILE_ID_HEADER)
    reconcile_id = reconcile_id if reconcile_id and _RECONCILE_ID.match(reconcile_id) else None
    try:
        mode = _mode(headers)
        text = body.decode("utf-8", errors="replace")
        if not text:
            raise RequestError(400, "InvalidJSON", f"request body is empty; want a {function.request_kind}")
        if mode != "json" and function.kind == "admission":
            raise RequestError(415, "UnsupportedMediaType", "an admission function takes a plain JSON AdmissionRequest (content-type application/json), not a CloudEvent")
        if mode == "cloudevents-batch":
            return _handle_batch(function, "cloudevents", _parse(text, "CloudEvent"))
        value = _parse(text, "request") if mode == "json" else _event_data(headers, text, mode)
        if mode == "json" and function.kind != "admission" and isinstance(value, dict) and value.get("kind") == "ReconcileBatchRequest":
            return _handle_batch(function, "json", value)
        request = _accept(function, value)
        own_id = request.get("uid") if function.kind == "admission" else request.get("reconcileId")
        reconcile_id = own_id or reconcile_id or str(uuid.uuid4())
        status, reply_headers, reply_body = _encode(function, mode, reconcile_id, _call(function, request))
        if function.kind != "admission":
            reply_headers[BATCH_MAX_HEADER] = str(MAX_BATCH_ITEMS)
        return status, reply_headers, reply_body
    except RequestError as error:
        return error_reply(error.status, error.code, str(error), reconcile_id)


def handle(function, headers, body, keys=None, now=None):
    """handle_call behind the signing gate: with keys, a request not signed with the request key of the
    audience it names (x-kubeloop-audience), fresh, is refused with 401 InvalidSignature before the
    function runs, unsigned (a signed refusal would sign any webhook-id anyone asks for); the reply to a
    verified request is signed with the reply key of that audience and the request's webhook-id."""
    if not keys:
        return handle_call(function, headers, body)
    ok, detail = signing.verify_request(keys, headers, body, now=now)
    if not ok:
        given = headers.get(RECONCILE_ID_HEADER)
        return error_reply(401, "InvalidSignature", detail, given if given and _RECONCILE_ID.match(given) else None)
    message_id, audience = detail
    status, reply_headers, reply_body = handle_call(function, headers, body)
    return status, {**reply_headers, **signing.sign_reply(keys, audience, message_id, reply_body, now=now)}, reply_body
