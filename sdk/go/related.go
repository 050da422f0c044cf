// Related objects (docs/contract.md, "Related objects"): finding one object by name among those the router
// sent under a Loop's spec.related entry, as related_named does in the Python SDK and relatedNamed in TypeScript.
package kubeloop

// RelatedOf returns the objects sent under the related entry name ([] when none matched or it was not sent).
func (r ReconcileRequest) RelatedOf(name string) []Object {
	return r.Related[name]
}

// RelatedNamed returns the object called objectName under the related entry name, or nil when it was not
// sent (it does not exist, or the entry matched nothing).
func (r ReconcileRequest) RelatedNamed(name, objectName string) Object {
	for _, obj := range r.RelatedOf(name) {
		if obj.Name() == objectName {
			return obj
		}
	}
	return nil
}

// RelatedNamedIn is RelatedNamed for an entry that spans namespaces: the object must be in namespace too.
func (r ReconcileRequest) RelatedNamedIn(name, namespace, objectName string) Object {
	for _, obj := range r.RelatedOf(name) {
		if obj.Name() == objectName && obj.Namespace() == namespace {
			return obj
		}
	}
	return nil
}
