// `kubeloop init --language python`: a reconcile function on the Python SDK (standard library only,
// vendored as kubeloop/): function.py, its unittest with the recorded fixture, a Dockerfile, the Loop and
// the chart values. `python3 -m unittest` passes at once.
import type { ProjectOptions } from '../project-options.ts';
import { fixture, reconciledLabel } from './function-code.ts';
import { languageProjectFiles, type LanguageProject } from './language-project.ts';
import type { ProjectFile } from './project-file.ts';
import { sdkFiles } from './sdk-files.ts';

/** What the Loop's spec.related sends, shown where the function would read it (kubeloop init --related). */
function relatedComment(options: ProjectOptions): string {
  if (options.related.length === 0) return '    # Objects the primary refers to would arrive in request["related"] (kubeloop init --related v1/ConfigMap).';
  const lines = options.related.map((r) => `    ${r.name}s = kubeloop.related_of(request, "${r.name}")  # the ${r.ref.kind} named by annotation ${r.annotation}; a change of it calls this again`);
  return ['    # Related objects (the Loop\'s spec.related) arrive in request["related"], one key per entry.', ...lines].join('\n');
}

function functionModule(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `"""${options.name}: a kubeloop reconcile function for ${kind} (${apiVersion}), a pure (request) -> response.

kubeloop init wrote this example: it labels every ${kind} it sees. Replace the body with your controller.
The SDK (kubeloop/, standard library only) is documented in kubeloop's docs/sdks.md."""
import kubeloop

RECONCILED_LABEL = "${reconciledLabel(options)}"


@kubeloop.function("${options.name}")
def reconcile(request):
    obj = request["object"]
    meta = obj.get("metadata") or {}
    # An object on its way out needs nothing; patching it would only race its deletion.
    if meta.get("deletionTimestamp") or request["trigger"]["type"] == "DELETED":
        return kubeloop.respond([])
    # Kinds the Loop owns arrive in request["children"], one key per kind, [] when there are none.
${relatedComment(options)}

    # Level-based: compare what is observed with what should be; "nothing to do" is an empty answer.
    if (meta.get("labels") or {}).get(RECONCILED_LABEL) == "true":
        return kubeloop.respond([])

    def label(draft):
        draft["metadata"]["labels"] = {**(draft["metadata"].get("labels") or {}), RECONCILED_LABEL: "true"}

    return kubeloop.respond([
        # A JSON patch that starts with a resourceVersion test: computed from stale state, it fails and is retried.
        kubeloop.patch_action(obj, label),
        kubeloop.event("Normal", "Reconciled", f"{obj.get('kind', '${kind}')} {meta.get('name', '')} reconciled by ${options.name}"),
    ])


if __name__ == "__main__":
    # Flags and environment as the kubeloop chart passes them: --port/PORT, --signing-secret-file, ...
    kubeloop.serve(reconcile)
`;
}

function unitTest(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `"""Unit tests of ${options.name}: the reconcile logic called directly, then every recorded fixture in fixtures/.
Run: python3 -m unittest"""
import os
import unittest

import kubeloop
from function import RECONCILED_LABEL, reconcile

OBJECT = {"apiVersion": "${apiVersion}", "kind": "${kind}", "metadata": {"name": "web", "namespace": "shop", "uid": "uid-1", "resourceVersion": "7"}}


def request_for(obj):
    return {"apiVersion": "kubeloop.dev/v1", "kind": "ReconcileRequest", "loop": "test", "trigger": {"type": "MODIFIED"},
            "object": obj, "children": {}, "now": "2026-01-01T00:00:00Z"}


class ReconcileTest(unittest.TestCase):
    def test_labels_an_object_it_has_not_reconciled_guarded_by_its_resource_version(self):
        patch, event = reconcile.call(request_for(OBJECT))["actions"]
        self.assertEqual(patch["patch"], [
            {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
            {"op": "add", "path": "/metadata/labels", "value": {RECONCILED_LABEL: "true"}},
        ])
        self.assertEqual(event["reason"], "Reconciled")

    def test_answers_nothing_to_do_when_already_labelled(self):
        labelled = {**OBJECT, "metadata": {**OBJECT["metadata"], "labels": {RECONCILED_LABEL: "true"}}}
        self.assertEqual(reconcile.call(request_for(labelled))["actions"], [])

${pythonFixtureCase('reconcile', 'os.path.dirname(os.path.abspath(__file__))')}`;
}

/** The unittest's last case (every recorded fixture answered as recorded) and its main: `fn` is the decorated function. */
export function pythonFixtureCase(fn: string, folder: string): string {
  return `    def test_answers_every_recorded_fixture_as_recorded(self):
        results = kubeloop.run_fixtures(${fn}, os.path.join(${folder}, "fixtures"))
        self.assertTrue(results, "no fixtures in fixtures/")
        for name, mismatch in results:
            with self.subTest(fixture=name):
                self.assertIsNone(mismatch)


if __name__ == "__main__":
    unittest.main()
`;
}

export const PYTHON_DOCKERFILE = `# The function's image: Python's standard library only, non-root (distroless), served by kubeloop.serve.
#   docker build -t <registry>/<repository>:<tag> .
FROM gcr.io/distroless/python3-debian12:nonroot
WORKDIR /app
COPY kubeloop ./kubeloop
COPY function.py ./
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 8080
# The chart appends --port, --drain-delay-seconds and --signing-secret-file; PORT and KUBELOOP_* work too.
ENTRYPOINT ["python3", "function.py"]
`;

/** How a Python project is laid out, tested, served and built (reconcile and admission alike). */
export const PYTHON_PROJECT: LanguageProject = {
  language: 'Python',
  layout: '`function.py` is a pure `(request) -> response`; `kubeloop/` is the SDK',
  test: 'python3 -m unittest',
  serve: 'python3 function.py',
  dockerfile: PYTHON_DOCKERFILE,
  dockerignore: 'fixtures\ntest_*.py\n__pycache__\n',
};

export function pythonProjectFiles(options: ProjectOptions): ProjectFile[] {
  return [
    { path: 'function.py', content: functionModule(options) },
    { path: 'test_function.py', content: unitTest(options) },
    { path: 'fixtures/labels-new-object.json', content: fixture(options) },
    ...sdkFiles('python/kubeloop', 'kubeloop'),
    { path: '.gitignore', content: '__pycache__/\n' },
    ...languageProjectFiles(options, PYTHON_PROJECT),
  ];
}
