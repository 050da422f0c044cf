// config-reloader in Go on the kubeloop SDK (sdk/go), reading related objects (docs/contract.md, "Related
// objects"): a Deployment annotated "kubeloop.dev/config-map: <name>" carries the hash of that ConfigMap's
// data in its pod template, so editing the ConfigMap rolls it. Same answers as functions/config-reloader.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	kubeloop "github.com/kubeloop/kubeloop/sdk/go"
)

const (
	configMapAnnotation  = "kubeloop.dev/config-map"
	configHashAnnotation = "kubeloop.dev/config-hash"
	// The Loop's spec.related entry the ConfigMap arrives under (samples/related/config-reloader.yaml).
	relatedConfig = "config"
)

// configHash is sha256 of data and binaryData with sorted keys, byte for byte the JSON the TypeScript
// function hashes (encoding/json sorts map keys; HTML escaping off, as JSON.stringify does not escape).
func configHash(configMap kubeloop.Object) string {
	orEmpty := func(key string) map[string]any {
		if m, ok := configMap[key].(map[string]any); ok {
			return m
		}
		return map[string]any{}
	}
	var canonical bytes.Buffer
	encoder := json.NewEncoder(&canonical)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(struct {
		Data       map[string]any `json:"data"`
		BinaryData map[string]any `json:"binaryData"`
	}{orEmpty("data"), orEmpty("binaryData")})
	sum := sha256.Sum256(bytes.TrimSuffix(canonical.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])[:32]
}

// ConfigReloader is the function: (ReconcileRequest) -> ReconcileResponse, no I/O.
var ConfigReloader = kubeloop.DefineFunction("config-reloader", func(request *kubeloop.ReconcileRequest) *kubeloop.ReconcileResponse {
	deployment := request.Object
	if deployment.Deleting() || request.Trigger.Type == "DELETED" {
		return kubeloop.Respond()
	}
	name := deployment.Annotations()[configMapAnnotation]
	if name == "" {
		return kubeloop.Respond()
	}
	configMap := request.RelatedNamed(relatedConfig, name)
	if configMap == nil {
		// Keep the last hash: pods keep running with the config they have; the event says what is wrong.
		message := fmt.Sprintf("ConfigMap %s named by %s does not exist; the pod template keeps its last config hash", name, configMapAnnotation)
		return kubeloop.Respond(kubeloop.Event("Warning", "ConfigMapNotFound", message))
	}
	hash := configHash(configMap)
	if templateAnnotations(deployment)[configHashAnnotation] == hash {
		return kubeloop.Respond()
	}
	return kubeloop.Respond(
		kubeloop.PatchAction(deployment, func(draft kubeloop.Object) {
			metadata := child(child(child(draft, "spec"), "template"), "metadata")
			child(metadata, "annotations")[configHashAnnotation] = hash
		}),
		kubeloop.Event("Normal", "ConfigChanged", fmt.Sprintf("ConfigMap %s changed: pod template annotated with %s=%s", name, configHashAnnotation, hash)),
	)
})

// child returns parent[key] as an object, made when absent.
func child(parent map[string]any, key string) map[string]any {
	if m, ok := parent[key].(map[string]any); ok {
		return m
	}
	m := map[string]any{}
	parent[key] = m
	return m
}

// templateAnnotations reads spec.template.metadata.annotations without changing the object.
func templateAnnotations(deployment kubeloop.Object) map[string]any {
	spec, _ := deployment["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	metadata, _ := template["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	return annotations
}

func main() { kubeloop.Serve(ConfigReloader) }
