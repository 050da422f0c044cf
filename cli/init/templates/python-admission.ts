// `kubeloop init --admission validating|mutating --language python`: an admission function on the Python SDK
// (standard library only, vendored as kubeloop/): function.py, its unittest with the recorded AdmissionRequest
// (the same fixture the TypeScript project gets), a Dockerfile, the AdmissionHook and function.yaml (or the
// chart values with --cluster). `python3 -m unittest` passes at once.
import type { ProjectOptions } from '../project-options.ts';
import { admissionFixture, admittedLabel, REQUIRED_LABEL } from './admission-code.ts';
import { languageAdmissionFiles } from './language-project.ts';
import type { ProjectFile } from './project-file.ts';
import { PYTHON_PROJECT, pythonFixtureCase } from './python-project.ts';
import { sdkFiles } from './sdk-files.ts';

function functionModule(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  const head = `"""${options.name}: a kubeloop ${options.admission} admission function for ${kind} (${apiVersion}), a pure (request) -> response.
`;
  const serve = `

if __name__ == "__main__":
    # Flags and environment as the kubeloop chart passes them: --port/PORT, --signing-secret-file, ...
    kubeloop.serve(admit)
`;
  if (options.admission === 'mutating') {
    return `${head}
kubeloop init wrote this example: it labels every ${kind} it admits. Replace the change with yours.
The SDK (kubeloop/, standard library only) is documented in kubeloop's docs/sdks.md."""
import kubeloop

ADMITTED_LABEL = "${admittedLabel(options)}"


@kubeloop.admission("${options.name}", type="mutating")
def admit(request):
    # DELETE carries no object to change.
    if request.get("object") is None:
        return kubeloop.allow()

    def label(draft):
        draft["metadata"]["labels"] = {**(draft["metadata"].get("labels") or {}), ADMITTED_LABEL: "true"}

    # mutate() runs the change on a copy and answers the JSON patch between the two: none when already labelled.
    return kubeloop.mutate(request, label)
${serve}`;
  }
  return `${head}
kubeloop init wrote this example: it denies a ${kind} without a "${REQUIRED_LABEL}" label. Replace it with your policy.
The SDK (kubeloop/, standard library only) is documented in kubeloop's docs/sdks.md."""
import kubeloop

REQUIRED_LABEL = "${REQUIRED_LABEL}"


@kubeloop.admission("${options.name}", type="validating")
def admit(request):
    obj = request.get("object")
    if obj is None:  # DELETE carries no object (request["oldObject"] is the stored one): nothing to check
        return kubeloop.allow()
    meta = obj.get("metadata") or {}
    if ((meta.get("labels") or {}).get(REQUIRED_LABEL) or "").strip():
        return kubeloop.allow()
    # generateName: a ReplicaSet's pods have no name yet at admission.
    name = meta.get("name") or f"{meta.get('generateName', '')}*"
    # What kubectl prints after "admission webhook ... denied the request:". Decide the same on a dry run.
    return kubeloop.deny(f'${kind} "{name}" needs a "{REQUIRED_LABEL}" label (add metadata.labels.{REQUIRED_LABEL})', code=422, reason="Invalid")
${serve}`;
}

function unitTest(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  const mutating = options.admission === 'mutating';
  const cases = mutating
    ? `    def test_labels_a_new_object_and_changes_nothing_when_already_labelled(self):
        self.assertTrue(admit.call(request_for(OBJECT))["patch"])
        labelled = {**OBJECT, "metadata": {**OBJECT["metadata"], "labels": {ADMITTED_LABEL: "true"}}}
        self.assertNotIn("patch", admit.call(request_for(labelled)))
`
    : `    def test_denies_an_object_without_the_label_naming_it(self):
        response = admit.call(request_for(OBJECT))
        self.assertFalse(response["allowed"])
        self.assertEqual(response["status"]["code"], 422)
        self.assertIn(f'needs a "{REQUIRED_LABEL}" label', response["status"]["message"])

    def test_allows_an_object_with_the_label(self):
        labelled = {**OBJECT, "metadata": {**OBJECT["metadata"], "labels": {REQUIRED_LABEL: "payments"}}}
        self.assertTrue(admit.call(request_for(labelled))["allowed"])
`;
  return `"""Unit tests of ${options.name}: the admission logic called directly, then every recorded fixture in fixtures/.
Run: python3 -m unittest"""
import json
import os
import unittest

import kubeloop
from function import ${mutating ? 'ADMITTED_LABEL' : 'REQUIRED_LABEL'}, admit

HERE = os.path.dirname(os.path.abspath(__file__))
# The recorded request (fixtures/), with another object: what the gateway would send for it.
with open(os.path.join(HERE, "${admissionFixture(options).path}"), encoding="utf-8") as recorded:
    RECORDED = json.load(recorded)["request"]
OBJECT = {"apiVersion": "${apiVersion}", "kind": "${kind}", "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}}}


def request_for(obj, operation="CREATE"):
    return {**RECORDED, "operation": operation, "object": None if operation == "DELETE" else obj, "oldObject": obj if operation == "DELETE" else None}


class AdmitTest(unittest.TestCase):
${cases}
    def test_allows_a_delete_which_has_no_object(self):
        self.assertTrue(admit.call(request_for(OBJECT, "DELETE"))["allowed"])

${pythonFixtureCase('admit', 'HERE')}`;
}

export function pythonAdmissionFiles(options: ProjectOptions): ProjectFile[] {
  return [
    { path: 'function.py', content: functionModule(options) },
    { path: 'test_function.py', content: unitTest(options) },
    ...sdkFiles('python/kubeloop', 'kubeloop'),
    { path: '.gitignore', content: '__pycache__/\n' },
    ...languageAdmissionFiles(options, PYTHON_PROJECT),
  ];
}
