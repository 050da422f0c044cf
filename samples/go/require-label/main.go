// require-label in Go on the kubeloop SDK (sdk/go): a validating admission function that denies objects
// without a label (KUBELOOP_REQUIRED_LABEL, default "team"), naming what to add. The same recorded cases as
// the TypeScript function (test/fixtures/require-label) pass.
package main

import (
	"fmt"
	"os"
	"strings"

	kubeloop "github.com/kubeloop/kubeloop/sdk/go"
)

func requiredLabel() string {
	if label := strings.TrimSpace(os.Getenv("KUBELOOP_REQUIRED_LABEL")); label != "" {
		return label
	}
	return "team"
}

// RequireLabel is the function: (AdmissionRequest) -> AdmissionResponse, no I/O.
var RequireLabel = kubeloop.DefineAdmission("require-label", "validating", func(request *kubeloop.AdmissionRequest) *kubeloop.AdmissionResponse {
	object := request.Object
	if object == nil { // DELETE carries no object: nothing to check
		return kubeloop.Allow()
	}
	label := requiredLabel()
	if strings.TrimSpace(object.Labels()[label]) != "" {
		return kubeloop.Allow()
	}
	name := object.Name()
	if name == "" {
		generateName, _ := object.Metadata()["generateName"].(string)
		name = generateName + "*"
	}
	where := ""
	if request.Namespace != "" {
		where = " in namespace " + request.Namespace
	}
	denied := kubeloop.Deny(fmt.Sprintf("%s %q%s needs a %q label (add metadata.labels.%s)", object.Kind(), name, where, label, label), 422)
	denied.Status.Reason = "Invalid"
	denied.AuditAnnotations = map[string]string{"missing": label}
	return denied
})

func main() { kubeloop.Serve(RequireLabel) }
