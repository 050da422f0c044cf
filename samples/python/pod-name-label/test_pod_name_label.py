"""The Python port of pod-name-label answers every recorded case of the TypeScript function in-process
(test/fixtures/pod-name-label); `kubeloop conformance` checks it over HTTP."""
import os
import unittest

import kubeloop
from pod_name_label import pod_name_label

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "test", "fixtures", "pod-name-label")


class PodNameLabelTest(unittest.TestCase):
    def test_answers_every_recorded_case(self):
        results = kubeloop.run_fixtures(pod_name_label, FIXTURES)
        self.assertGreater(len(results), 5)
        for name, mismatch in results:
            with self.subTest(case=name):
                self.assertIsNone(mismatch)

    def test_removes_only_its_own_label(self):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "resourceVersion": "3", "labels": {"app": "web", "kubeloop.dev/pod-name": "web-0"}}}
        request = {"trigger": {"type": "MODIFIED"}, "object": pod}
        self.assertEqual(pod_name_label.call(request)["actions"][0]["patch"][1:], [{"op": "remove", "path": "/metadata/labels/kubeloop.dev~1pod-name"}])


if __name__ == "__main__":
    unittest.main()
