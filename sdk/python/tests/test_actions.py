"""The action helpers build the contract's actions; patch_action guards with a resourceVersion test and
answers None when nothing changes."""
import unittest

import kubeloop
from kubeloop.core import _schema
from kubeloop.schema import validate

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop", "uid": "u-1", "resourceVersion": "7", "labels": {"app": "web"}}}


class ActionsTest(unittest.TestCase):
    def test_patch_action_diffs_the_draft_behind_a_resource_version_test(self):
        def relabel(draft):
            draft["metadata"]["labels"]["kubeloop.dev/seen"] = "true"
            del draft["metadata"]["labels"]["app"]

        action = kubeloop.patch_action(POD, relabel)
        self.assertEqual(action["target"], {"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "web-0"})
        self.assertEqual(action["patch"], [
            {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
            {"op": "remove", "path": "/metadata/labels/app"},
            {"op": "add", "path": "/metadata/labels/kubeloop.dev~1seen", "value": "true"},
        ])
        self.assertIsNone(kubeloop.patch_action(POD, lambda draft: None))

    def test_every_helper_makes_a_reply_the_contract_accepts(self):
        child = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "ownerReferences": [kubeloop.controller_reference(POD)]}}
        reply = kubeloop.respond(
            [kubeloop.create(child), kubeloop.apply(child), kubeloop.delete(POD), kubeloop.status({"ready": True}),
             kubeloop.status_action(POD, {"ready": True}), kubeloop.event("Normal", "Done", "ok"), None],
            requeue_after_seconds=30,
            error=kubeloop.temporary_error("later", retry_after_seconds=5),
        )
        self.assertEqual(validate(_schema("reconcile-response"), reply), [])
        self.assertEqual(len(reply["actions"]), 6)  # the None is dropped
        self.assertEqual(reply["actions"][2]["preconditions"], {"uid": "u-1", "resourceVersion": "7"})
        self.assertIsNone(kubeloop.status_action({**POD, "status": {"ready": True}}, {"ready": True}))

    def test_admission_answers(self):
        request = {"object": POD}
        self.assertEqual(kubeloop.allow(), {"apiVersion": "kubeloop.dev/v1", "kind": "AdmissionResponse", "allowed": True})
        self.assertEqual(kubeloop.deny("no team", code=422)["status"], {"message": "no team", "code": 422})
        stamped = kubeloop.mutate(request, lambda draft: draft["metadata"]["labels"].update(team="a"))
        self.assertEqual(stamped["patch"], [{"op": "add", "path": "/metadata/labels/team", "value": "a"}])
        self.assertNotIn("patch", kubeloop.mutate(request, lambda draft: None))
        for reply in (kubeloop.allow(["careful"]), kubeloop.deny("no"), stamped):
            self.assertEqual(validate(_schema("admission-response"), reply), [])


if __name__ == "__main__":
    unittest.main()
