"""The Python port of require-label answers every recorded case of the TypeScript function
(test/fixtures/require-label) in-process; `kubeloop conformance` checks it over HTTP on POST /admit."""
import os
import unittest

import kubeloop
from require_label import require_label

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "test", "fixtures", "require-label")


class RequireLabelTest(unittest.TestCase):
    def test_answers_every_recorded_case(self):
        results = kubeloop.run_fixtures(require_label, FIXTURES)
        self.assertGreater(len(results), 3)
        for name, mismatch in results:
            with self.subTest(case=name):
                self.assertIsNone(mismatch)


if __name__ == "__main__":
    unittest.main()
