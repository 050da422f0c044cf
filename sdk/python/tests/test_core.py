"""The request path every transport shares: status and error codes, CloudEvents binary and structured mode
with the reply event, the signing gate, and the function's own failures as 500s, never a crash."""
import json
import time
import unittest

import kubeloop
import kubeloop.schema
from kubeloop import core, signing

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop", "resourceVersion": "7"}}
REQUEST = {"apiVersion": "kubeloop.dev/v1", "kind": "ReconcileRequest", "loop": "t", "reconcileId": "rec-1", "trigger": {"type": "ADDED"}, "object": POD, "children": {}, "now": "2026-11-22T10:00:00Z"}
BODY = json.dumps(REQUEST).encode()
JSON = {"content-type": "application/json"}


def labeller(request):
    if request["object"]["metadata"].get("labels", {}).get("misbehave") == "throw":
        raise RuntimeError("cannot")
    if request["object"]["metadata"].get("labels", {}).get("misbehave") == "invalid":
        return {"apiVersion": "kubeloop.dev/v1", "kind": "ReconcileResponse", "actions": [{"op": "explode"}]}
    return kubeloop.respond([kubeloop.event("Normal", "Seen", "seen")])


FUNCTION = kubeloop.define_function("labeller", labeller)


def call(headers, body, function=FUNCTION, keys=None):
    status, reply_headers, reply = core.handle(function, headers, body, keys)
    return status, reply_headers, json.loads(reply) if reply else None


def with_label(value):
    return json.dumps({**REQUEST, "object": {**POD, "metadata": {**POD["metadata"], "labels": {"misbehave": value}}}}).encode()


class CoreTest(unittest.TestCase):
    def test_answers_plain_json_and_echoes_the_reconcile_id(self):
        status, headers, reply = call(JSON, BODY)
        self.assertEqual(status, 200)
        self.assertEqual(headers[core.RECONCILE_ID_HEADER], "rec-1")
        self.assertEqual(reply["actions"][0]["reason"], "Seen")

    def test_answers_a_cloudevent_in_the_mode_it_came_in(self):
        binary = {**JSON, "ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/t", "ce-type": core.EVENT_TYPE}
        status, headers, reply = call(binary, BODY)
        self.assertEqual((status, headers["ce-type"], headers["ce-id"], headers["ce-source"]), (200, core.RESPONSE_EVENT_TYPE, "rec-1", "/kubeloop/functions/labeller"))
        self.assertEqual(reply["kind"], "ReconcileResponse")
        event = {"specversion": "1.0", "id": "e1", "source": "/t", "type": core.EVENT_TYPE, "datacontenttype": "application/json", "data": REQUEST}
        status, headers, reply = call({"content-type": "application/cloudevents+json"}, json.dumps(event).encode())
        self.assertEqual((status, headers["content-type"].split(";")[0], reply["type"], reply["id"]), (200, "application/cloudevents+json", core.RESPONSE_EVENT_TYPE, "rec-1"))
        self.assertEqual(reply["data"]["kind"], "ReconcileResponse")

    def test_advertises_batches_and_answers_them_item_by_item(self):
        _, headers, _ = call(JSON, BODY)
        self.assertEqual(headers[core.BATCH_MAX_HEADER], "64")
        items = [
            {**REQUEST, "reconcileId": "a"},
            {**json.loads(with_label("throw")), "reconcileId": "boom"},
            {**REQUEST, "reconcileId": "no-object", "object": None},
            {**REQUEST, "reconcileId": "b"},
        ]
        status, _, reply = call(JSON, json.dumps({"apiVersion": "kubeloop.dev/v1", "kind": "ReconcileBatchRequest", "items": items}).encode())
        self.assertEqual((status, reply["kind"]), (200, "ReconcileBatchResponse"))
        by_id = {item["reconcileId"]: item for item in reply["items"]}
        self.assertEqual(by_id["a"]["response"]["actions"][0]["reason"], "Seen")
        self.assertEqual(by_id["b"]["response"]["kind"], "ReconcileResponse")
        self.assertEqual((by_id["boom"]["error"]["statusCode"], by_id["boom"]["error"]["code"]), (500, "FunctionError"))
        self.assertEqual((by_id["no-object"]["error"]["statusCode"], by_id["no-object"]["error"]["code"]), (400, "InvalidRequest"))
        events = [{"specversion": "1.0", "id": i["reconcileId"], "source": "/t", "type": core.EVENT_TYPE, "data": i} for i in items[:2]]
        events.append({"specversion": "1.0", "id": "other", "source": "/t", "type": "com.example.other", "data": REQUEST})
        status, headers, reply = call({"content-type": "application/cloudevents-batch+json"}, json.dumps(events).encode())
        self.assertEqual((status, headers["content-type"].split(";")[0]), (200, "application/cloudevents-batch+json"))
        by_id = {event["id"]: event for event in reply}
        self.assertEqual(by_id["a"]["type"], core.RESPONSE_EVENT_TYPE)
        self.assertEqual((by_id["boom"]["type"], by_id["boom"]["data"]["code"]), (core.ERROR_EVENT_TYPE, "FunctionError"))
        self.assertEqual((by_id["other"]["type"], by_id["other"]["data"]["statusCode"]), (core.ERROR_EVENT_TYPE, 400))

    def test_refuses_bad_input_with_the_contract_codes(self):
        cases = [
            ({"content-type": "text/plain"}, b"x", 415, "UnsupportedMediaType"),
            ({"content-type": "application/cloudevents-batch+json"}, b"[]", 400, "InvalidCloudEvent"),
            ({"content-type": "application/cloudevents-batch+json"}, b"{}", 400, "InvalidCloudEvent"),
            (JSON, json.dumps({"kind": "ReconcileBatchRequest", "items": [REQUEST, REQUEST]}).encode(), 400, "InvalidRequest"),
            (JSON, b"", 400, "InvalidJSON"),
            (JSON, b"{nope", 400, "InvalidJSON"),
            (JSON, b'{"apiVersion": "kubeloop.dev/v1", "kind": "ReconcileRequest"}', 400, "InvalidRequest"),
            (JSON, json.dumps({**REQUEST, "apiVersion": "kubeloop.dev/v2"}).encode(), 400, "UnsupportedApiVersion"),
            ({**JSON, "ce-specversion": "1.0", "ce-id": "e", "ce-source": "/t", "ce-type": "other"}, BODY, 400, "InvalidCloudEvent"),
            ({**JSON, "ce-specversion": "1.0", "ce-source": "/t", "ce-type": core.EVENT_TYPE}, BODY, 400, "InvalidCloudEvent"),
            (JSON, with_label("throw"), 500, "FunctionError"),
            (JSON, with_label("invalid"), 500, "InvalidResponse"),
        ]
        for headers, body, status, code in cases:
            with self.subTest(code=code, body=body[:40]):
                got_status, got_headers, reply = call(headers, body)
                self.assertEqual((got_status, reply["code"], reply["statusCode"]), (status, code, status))
                self.assertTrue(reply["message"])
                self.assertIn(core.RECONCILE_ID_HEADER, got_headers)

    def test_admission_takes_plain_json_only_and_a_validating_function_no_patch(self):
        admit = kubeloop.define_admission("stamp", "validating", lambda request: kubeloop.mutate(request, lambda d: d.update(x=1)))
        request = {"apiVersion": "kubeloop.dev/v1", "kind": "AdmissionRequest", "hook": "h", "uid": "u-1", "operation": "CREATE",
                   "requestKind": {"group": "", "version": "v1", "kind": "Pod"}, "resource": {"group": "", "version": "v1", "resource": "pods"},
                   "object": POD, "userInfo": {}, "dryRun": False, "context": {}, "now": "2026-11-22T10:00:00Z"}
        body = json.dumps(request).encode()
        status, _, reply = call({**JSON, "ce-specversion": "1.0", "ce-id": "e", "ce-source": "/t", "ce-type": core.EVENT_TYPE}, body, admit)
        self.assertEqual((status, reply["code"]), (415, "UnsupportedMediaType"))
        status, headers, reply = call(JSON, body, admit)
        self.assertEqual((status, reply["code"], headers[core.RECONCILE_ID_HEADER]), (500, "InvalidResponse", "u-1"))

    def test_with_a_key_refuses_unsigned_requests_unsigned_and_signs_replies_with_the_reply_key(self):
        keys = signing.parse_secrets("whsec_" + "C" * 32)
        audience = {signing.AUDIENCE_HEADER: "loop/pod-name-label"}
        request_keys = signing.derive(keys, "request", "loop/pod-name-label")
        status, headers, reply = call(JSON, BODY, keys=keys)
        self.assertEqual((status, reply["code"]), (401, "InvalidSignature"))
        self.assertNotIn("webhook-signature", headers)
        stale = signing.sign(request_keys, BODY, now=time.time() - 360)
        self.assertEqual(call({**JSON, **audience, **stale}, BODY, keys=keys)[0], 401)
        # Signed with the secret's own key, the reply key, or for another Loop: refused, and the refusal unsigned.
        for forged in [{**audience, **signing.sign(keys, BODY)},
                       {**audience, **signing.sign(signing.derive(keys, "reply", "loop/pod-name-label"), BODY)},
                       {signing.AUDIENCE_HEADER: "loop/other", **signing.sign(request_keys, BODY)}]:
            status, headers, _ = call({**JSON, **forged}, BODY, keys=keys)
            self.assertEqual(status, 401)
            self.assertNotIn("webhook-signature", headers)
        signed = signing.sign(request_keys, BODY)
        status, headers, raw = core.handle(FUNCTION, {**JSON, **audience, **signed}, BODY, keys)
        self.assertEqual(status, 200)
        self.assertNotIn(signing.AUDIENCE_HEADER, headers)
        self.assertEqual(signing.verify(signing.derive(keys, "reply", "loop/pod-name-label"), headers, raw), (True, signed["webhook-id"]))
        self.assertFalse(signing.verify(request_keys, headers, raw)[0])


class SchemaCopyTest(unittest.TestCase):
    def test_the_packaged_schemas_are_the_repository_ones(self):
        import os

        repository = os.path.join(os.path.dirname(__file__), "..", "..", "..", "schemas")
        if not os.path.isdir(repository):
            self.skipTest("outside the kubeloop repository")
        for name in ("reconcile-request", "reconcile-response", "admission-request", "admission-response"):
            with open(os.path.join(repository, f"{name}.json"), encoding="utf-8") as file:
                self.assertEqual(kubeloop.schema.load_schema(name), json.load(file), f"sdk/python/kubeloop/schemas/{name}.json differs from schemas/: run `npm run schemas`")


class FixturesTest(unittest.TestCase):
    def test_compares_under_the_ordering_rules(self):
        two_events = lambda request: kubeloop.respond([kubeloop.event("Normal", "B", "b"), kubeloop.event("Normal", "A", "a")])  # noqa: E731
        recorded = {"request": REQUEST, "response": kubeloop.respond([kubeloop.event("Normal", "A", "other words"), kubeloop.event("Normal", "B", "b")])}
        self.assertIsNone(kubeloop.check_fixture(kubeloop.define_function("two", two_events), recorded))
        self.assertIn("expected", kubeloop.check_fixture(FUNCTION, recorded))


if __name__ == "__main__":
    unittest.main()
