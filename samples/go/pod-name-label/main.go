// pod-name-label in Go on the kubeloop SDK (sdk/go): a pod annotated "<annotation>: true" carries
// "<label>: <pod name>"; any other pod does not. The same recorded cases as the TypeScript function pass.
package main

import (
	"fmt"
	"os"
	"regexp"

	kubeloop "github.com/kubeloop/kubeloop/sdk/go"
)

const maxLabelValue = 63

var qualifiedName = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

func setting(variable, fallback string) string {
	value := os.Getenv(variable)
	if value == "" {
		value = fallback
	}
	if !qualifiedName.MatchString(value) {
		fmt.Fprintf(os.Stderr, "%s=%q is not a valid Kubernetes label/annotation key\n", variable, value)
		os.Exit(2)
	}
	return value
}

var (
	annotation = setting("KUBELOOP_POD_NAME_ANNOTATION", "kubeloop.dev/add-pod-name-label")
	label      = setting("KUBELOOP_POD_NAME_LABEL", "kubeloop.dev/pod-name")
)

// PodNameLabel is the function: (ReconcileRequest) -> ReconcileResponse, no I/O.
var PodNameLabel = kubeloop.DefineFunction("pod-name-label", func(request *kubeloop.ReconcileRequest) *kubeloop.ReconcileResponse {
	pod := request.Object
	if pod.Deleting() || request.Trigger.Type == "DELETED" {
		return kubeloop.Respond()
	}
	name := pod.Name()
	wanted := pod.Annotations()[annotation] == "true"
	if wanted && pod.Labels()[label] != name && len(name) > maxLabelValue {
		message := fmt.Sprintf("pod name %q has %d characters; label %s holds at most %d", name, len(name), label, maxLabelValue)
		return kubeloop.Respond(kubeloop.Event("Warning", "PodNameTooLong", message))
	}
	return kubeloop.Respond(kubeloop.PatchAction(pod, func(draft kubeloop.Object) {
		labels, _ := draft.Metadata()["labels"].(map[string]any)
		switch {
		case wanted && labels == nil:
			draft.Metadata()["labels"] = map[string]any{label: name}
		case wanted:
			labels[label] = name
		case labels != nil:
			delete(labels, label)
		}
	}))
})

func main() { kubeloop.Serve(PodNameLabel) }
