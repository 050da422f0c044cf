// `kubeloop init --language go`: a reconcile function on the Go SDK (standard library only, vendored as the
// module in kubeloop/ and wired with a replace line): main.go, its test with the recorded fixture, a
// Dockerfile, the Loop and the chart values. `go test ./...` passes at once.
import type { ProjectOptions } from '../project-options.ts';
import { fixture, reconciledLabel } from './function-code.ts';
import { languageProjectFiles, type LanguageProject } from './language-project.ts';
import type { ProjectFile } from './project-file.ts';
import { sdkFiles } from './sdk-files.ts';

export const GO_SDK_MODULE = 'github.com/kubeloop/kubeloop/sdk/go';

export function goMod(options: ProjectOptions): string {
  return `module example.com/${options.name}

go 1.22

require ${GO_SDK_MODULE} v0.0.0

// The SDK as kubeloop init vendored it (standard library only): builds offline and in Docker.
replace ${GO_SDK_MODULE} => ./kubeloop
`;
}

function mainGo(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `// ${options.name}: a kubeloop reconcile function for ${kind} (${apiVersion}), a pure (request) -> response.
// kubeloop init wrote this example: it labels every ${kind} it sees. Replace the body with your controller.
package main

import (
	"fmt"

	kubeloop "${GO_SDK_MODULE}"
)

const reconciledLabel = "${reconciledLabel(options)}"

// Function is what main serves and the tests call.
var Function = kubeloop.DefineFunction("${options.name}", func(request *kubeloop.ReconcileRequest) *kubeloop.ReconcileResponse {
	object := request.Object
	// An object on its way out needs nothing; patching it would only race its deletion.
	if object.Deleting() || request.Trigger.Type == "DELETED" {
		return kubeloop.Respond()
	}
	// Kinds the Loop owns arrive in request.Children, one key per kind, empty when there are none.

	// Level-based: compare what is observed with what should be; "nothing to do" is an empty answer.
	if object.Labels()[reconciledLabel] == "true" {
		return kubeloop.Respond()
	}
	return kubeloop.Respond(
		// A JSON patch that starts with a resourceVersion test: computed from stale state, it fails and is retried.
		kubeloop.PatchAction(object, func(draft kubeloop.Object) {
			labels, _ := draft.Metadata()["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				draft.Metadata()["labels"] = labels
			}
			labels[reconciledLabel] = "true"
		}),
		kubeloop.Event("Normal", "Reconciled", fmt.Sprintf("%s %s reconciled by ${options.name}", object.Kind(), object.Name())),
	)
})

// Flags and environment as the kubeloop chart passes them: --port/PORT, --signing-secret-file, ...
func main() { kubeloop.Serve(Function) }
`;
}

function mainTest(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `package main

import (
	"encoding/json"
	"testing"

	kubeloop "${GO_SDK_MODULE}"
)

// Unit tests of ${options.name}: the reconcile logic called directly, then every recorded fixture in fixtures/.

func requestFor(labels map[string]any) map[string]any {
	metadata := map[string]any{"name": "web", "namespace": "shop", "uid": "uid-1", "resourceVersion": "7"}
	if labels != nil {
		metadata["labels"] = labels
	}
	return map[string]any{"apiVersion": "kubeloop.dev/v1", "kind": "ReconcileRequest", "loop": "test", "trigger": map[string]any{"type": "MODIFIED"},
		"object": map[string]any{"apiVersion": "${apiVersion}", "kind": "${kind}", "metadata": metadata}, "children": map[string]any{}, "now": "2026-01-01T00:00:00Z"}
}

func TestLabelsAnObjectItHasNotReconciledGuardedByItsResourceVersion(t *testing.T) {
	reply, err := Function.Call(requestFor(nil))
	if err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(reply["actions"].([]any)[0].(map[string]any)["patch"])
	want := \`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/labels","value":{"\` + reconciledLabel + \`":"true"}}]\`
	if string(patch) != want {
		t.Errorf("patch %s, want %s", patch, want)
	}
}

func TestAnswersNothingToDoWhenAlreadyLabelled(t *testing.T) {
	reply, err := Function.Call(requestFor(map[string]any{reconciledLabel: "true"}))
	if err != nil || len(reply["actions"].([]any)) != 0 {
		t.Errorf("want no actions, got %v %v", reply, err)
	}
}

${GO_FIXTURE_TEST}`;
}

/** The test every Go project ends with: each recorded fixture answered as recorded by Function. */
export const GO_FIXTURE_TEST = `func TestAnswersEveryRecordedFixtureAsRecorded(t *testing.T) {
	fixtures, err := kubeloop.LoadFixtures("fixtures")
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures in fixtures/: %v", err)
	}
	for _, fixture := range fixtures {
		if err := kubeloop.CheckFixture(Function, fixture); err != nil {
			t.Error(err)
		}
	}
}
`;

export const GO_DOCKERFILE = `# syntax=docker/dockerfile:1
# The function's image: a static Go binary (standard library only) on distroless, non-root.
#   docker build -t <registry>/<repository>:<tag> .
FROM golang:1.22 AS build
WORKDIR /src
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /function .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /function /function
USER 65532:65532
EXPOSE 8080
# The chart appends --port, --drain-delay-seconds and --signing-secret-file; PORT and KUBELOOP_* work too.
ENTRYPOINT ["/function"]
`;

/** How a Go project is laid out, tested, served and built (reconcile and admission alike). */
export const GO_PROJECT: LanguageProject = {
  language: 'Go',
  layout: '`main.go` holds a pure `(request) -> response`; `kubeloop/` is the SDK module, wired with a `replace` line in go.mod',
  test: 'go test ./...',
  serve: 'go run .',
  dockerfile: GO_DOCKERFILE,
  dockerignore: 'fixtures\n',
};

export function goProjectFiles(options: ProjectOptions): ProjectFile[] {
  return [
    { path: 'go.mod', content: goMod(options) },
    { path: 'main.go', content: mainGo(options) },
    { path: 'main_test.go', content: mainTest(options) },
    { path: 'fixtures/labels-new-object.json', content: fixture(options) },
    ...sdkFiles('go', 'kubeloop'),
    ...languageProjectFiles(options, GO_PROJECT),
  ];
}
