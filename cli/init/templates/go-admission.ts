// `kubeloop init --admission validating|mutating --language go`: an admission function on the Go SDK
// (standard library only, vendored as the module in kubeloop/): main.go, its test with the recorded
// AdmissionRequest (the TypeScript project's fixture), a Dockerfile, the AdmissionHook and function.yaml (or
// the chart values with --cluster). `go test ./...` passes at once.
import type { ProjectOptions } from '../project-options.ts';
import { admittedLabel, REQUIRED_LABEL } from './admission-code.ts';
import { GO_FIXTURE_TEST, GO_PROJECT, GO_SDK_MODULE, goMod } from './go-project.ts';
import { languageAdmissionFiles } from './language-project.ts';
import type { ProjectFile } from './project-file.ts';
import { sdkFiles } from './sdk-files.ts';

function mainGo(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  const mutating = options.admission === 'mutating';
  const body = mutating
    ? `const admittedLabel = "${admittedLabel(options)}"

// Function is what main serves and the tests call.
var Function = kubeloop.DefineAdmission("${options.name}", "mutating", func(request *kubeloop.AdmissionRequest) *kubeloop.AdmissionResponse {
	if request.Object == nil { // DELETE carries no object to change
		return kubeloop.Allow()
	}
	// Mutate runs the change on a copy and answers the JSON patch between the two: none when already labelled.
	return kubeloop.Mutate(request, func(draft kubeloop.Object) {
		labels, _ := draft.Metadata()["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			draft.Metadata()["labels"] = labels
		}
		labels[admittedLabel] = "true"
	})
})`
    : `const requiredLabel = "${REQUIRED_LABEL}"

// Function is what main serves and the tests call.
var Function = kubeloop.DefineAdmission("${options.name}", "validating", func(request *kubeloop.AdmissionRequest) *kubeloop.AdmissionResponse {
	object := request.Object
	if object == nil { // DELETE carries no object (request.OldObject is the stored one): nothing to check
		return kubeloop.Allow()
	}
	if strings.TrimSpace(object.Labels()[requiredLabel]) != "" {
		return kubeloop.Allow()
	}
	// generateName: a ReplicaSet's pods have no name yet at admission.
	name := object.Name()
	if name == "" {
		generateName, _ := object.Metadata()["generateName"].(string)
		name = generateName + "*"
	}
	// What kubectl prints after "admission webhook ... denied the request:". Decide the same on a dry run.
	denied := kubeloop.Deny(fmt.Sprintf("${kind} %q needs a %q label (add metadata.labels.%s)", name, requiredLabel, requiredLabel), 422)
	denied.Status.Reason = "Invalid"
	return denied
})`;
  return `// ${options.name}: a kubeloop ${options.admission} admission function for ${kind} (${apiVersion}), a pure (request) -> response.
// kubeloop init wrote this example: ${mutating ? `it labels every ${kind} it admits. Replace the change with yours.` : `it denies a ${kind} without a "${REQUIRED_LABEL}" label. Replace it with your policy.`}
package main

import (
${mutating ? '' : '\t"fmt"\n\t"strings"\n\n'}\tkubeloop "${GO_SDK_MODULE}"
)

${body}

// Flags and environment as the kubeloop chart passes them: --port/PORT, --signing-secret-file, ...
func main() { kubeloop.Serve(Function) }
`;
}

function mainTest(options: ProjectOptions): string {
  return `package main

import (
	"testing"

	kubeloop "${GO_SDK_MODULE}"
)

// Unit tests of ${options.name}: a DELETE is allowed, then every recorded fixture in fixtures/ answered as recorded.

func TestAllowsADeleteWhichHasNoObject(t *testing.T) {
	reply, err := Function.Call(map[string]any{"apiVersion": "kubeloop.dev/v1", "kind": "AdmissionRequest", "uid": "u-1", "hook": "test", "operation": "DELETE",
		"namespace": "shop", "name": "web", "now": "2026-01-01T00:00:00Z"})
	if err != nil || reply["allowed"] != true {
		t.Errorf("want allowed, got %v %v", reply, err)
	}
}

${GO_FIXTURE_TEST}`;
}

export function goAdmissionFiles(options: ProjectOptions): ProjectFile[] {
  return [
    { path: 'go.mod', content: goMod(options) },
    { path: 'main.go', content: mainGo(options) },
    { path: 'main_test.go', content: mainTest(options) },
    ...sdkFiles('go', 'kubeloop'),
    ...languageAdmissionFiles(options, GO_PROJECT),
  ];
}
