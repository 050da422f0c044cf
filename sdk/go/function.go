package kubeloop

import (
	"encoding/json"
	"fmt"
	"regexp"
)

// ReconcileFunc is a reconcile function: pure, no I/O, no clock (use request.Now).
type ReconcileFunc func(request *ReconcileRequest) *ReconcileResponse

// AdmitFunc is an admission function.
type AdmitFunc func(request *AdmissionRequest) *AdmissionResponse

// Function is what the handler serves: made by DefineFunction or DefineAdmission.
type Function struct {
	Name string
	// Kind is "reconcile" or "admission".
	Kind string
	// AdmissionType is "validating" (no patch allowed) or "mutating".
	AdmissionType string
	reconcile     ReconcileFunc
	admit         AdmitFunc
}

var functionName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// DefineFunction names a reconcile function; the name must be a DNS label.
func DefineFunction(name string, reconcile ReconcileFunc) Function {
	if !functionName.MatchString(name) {
		panic(fmt.Sprintf("function name %q must be a DNS label (lower-case letters, digits, \"-\")", name))
	}
	return Function{Name: name, Kind: "reconcile", reconcile: reconcile}
}

// DefineAdmission names an admission function of admissionType "validating" or "mutating".
func DefineAdmission(name, admissionType string, admit AdmitFunc) Function {
	if !functionName.MatchString(name) {
		panic(fmt.Sprintf("function name %q must be a DNS label", name))
	}
	if admissionType != "validating" && admissionType != "mutating" {
		panic(fmt.Sprintf("admission type %q must be \"validating\" or \"mutating\"", admissionType))
	}
	return Function{Name: name, Kind: "admission", AdmissionType: admissionType, admit: admit}
}

func (f Function) requestKind() string {
	if f.Kind == "admission" {
		return "AdmissionRequest"
	}
	return "ReconcileRequest"
}

func (f Function) side() string {
	if f.Kind == "admission" {
		return "admission"
	}
	return "reconcile"
}

// Paths are where the function takes POSTs.
func (f Function) Paths() []string {
	if f.Kind == "admission" {
		return []string{"/", "/admit"}
	}
	return []string{"/", "/reconcile"}
}

// Call runs the function on a decoded request and returns the reply as decoded JSON, checked against
// the contract; a panic or an invalid reply is an error.
func (f Function) Call(request map[string]any) (reply map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &callError{status: 500, code: "FunctionError", message: fmt.Sprintf("function %s panicked: %v", f.Name, r)}
		}
	}()
	data, _ := json.Marshal(request)
	var out any
	if f.Kind == "admission" {
		var typed AdmissionRequest
		if err := json.Unmarshal(data, &typed); err != nil {
			return nil, &callError{status: 400, code: "InvalidRequest", message: err.Error()}
		}
		out = f.admit(&typed)
	} else {
		var typed ReconcileRequest
		if err := json.Unmarshal(data, &typed); err != nil {
			return nil, &callError{status: 400, code: "InvalidRequest", message: err.Error()}
		}
		out = f.reconcile(&typed)
	}
	encoded, err := json.Marshal(out)
	if err != nil {
		return nil, &callError{status: 500, code: "InvalidResponse", message: fmt.Sprintf("function %s returned a reply that is not JSON: %v", f.Name, err)}
	}
	_ = json.Unmarshal(encoded, &reply)
	problems := Validate(Schema(f.side()+"-response"), any(reply))
	if len(problems) == 0 && f.AdmissionType == "validating" && reply["patch"] != nil {
		problems = []string{"a validating function may not return a patch"}
	}
	if len(problems) > 0 {
		return nil, &callError{status: 500, code: "InvalidResponse", message: fmt.Sprintf("function %s returned an invalid %s: %s", f.Name, map[string]string{"reconcile": "ReconcileResponse", "admission": "AdmissionResponse"}[f.side()], joinFirst(problems, 5))}
	}
	return reply, nil
}
