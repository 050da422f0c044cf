package kubeloop

import "encoding/json"

func (o Object) str(key string) string {
	s, _ := o[key].(string)
	return s
}

func (o Object) meta() map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

func (o Object) metaString(key string) string {
	s, _ := o.meta()[key].(string)
	return s
}

func (o Object) metaMap(key string) map[string]string {
	raw, _ := o.meta()[key].(map[string]any)
	if raw == nil {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func (o Object) APIVersion() string      { return o.str("apiVersion") }
func (o Object) Kind() string            { return o.str("kind") }
func (o Object) Name() string            { return o.metaString("name") }
func (o Object) Namespace() string       { return o.metaString("namespace") }
func (o Object) UID() string             { return o.metaString("uid") }
func (o Object) ResourceVersion() string { return o.metaString("resourceVersion") }

// Deleting reports a deletionTimestamp: the object is going away.
func (o Object) Deleting() bool { return o.metaString("deletionTimestamp") != "" }

// Labels and Annotations are copies; nil when the object has none.
func (o Object) Labels() map[string]string      { return o.metaMap("labels") }
func (o Object) Annotations() map[string]string { return o.metaMap("annotations") }

// Target names the object for a patch or delete.
func (o Object) Target() ObjectTarget {
	return ObjectTarget{APIVersion: o.APIVersion(), Kind: o.Kind(), Namespace: o.Namespace(), Name: o.Name()}
}

// DeepCopy through JSON, as everything on the wire is JSON.
func (o Object) DeepCopy() Object {
	var out Object
	data, _ := json.Marshal(o)
	_ = json.Unmarshal(data, &out)
	return out
}

// Metadata returns metadata for editing in place (made when absent).
func (o Object) Metadata() map[string]any {
	if m := o.meta(); m != nil {
		return m
	}
	m := map[string]any{}
	o["metadata"] = m
	return m
}

// Decode converts the object into a typed struct of your own (a CRD's Go type, a client-go type).
func (o Object) Decode(into any) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// ToObject converts a typed struct into an Object, for create and apply actions.
func ToObject(from any) (Object, error) {
	data, err := json.Marshal(from)
	if err != nil {
		return nil, err
	}
	var out Object
	return out, json.Unmarshal(data, &out)
}
