#!/usr/bin/env python3
"""pod-name-label in Python on the kubeloop SDK (sdk/python): a pod annotated "<annotation>: true" carries
"<label>: <pod name>"; any other pod does not. The same recorded cases as the TypeScript function pass."""
import os
import re
import sys

import kubeloop

MAX_LABEL_VALUE = 63
QUALIFIED_NAME = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def setting(variable, default):
    value = os.environ.get(variable, "").strip() or default
    if not QUALIFIED_NAME.match(value):
        sys.exit(f'{variable}="{value}" is not a valid Kubernetes label/annotation key')
    return value


ANNOTATION = setting("KUBELOOP_POD_NAME_ANNOTATION", "kubeloop.dev/add-pod-name-label")
LABEL = setting("KUBELOOP_POD_NAME_LABEL", "kubeloop.dev/pod-name")


@kubeloop.function("pod-name-label")
def pod_name_label(request):
    pod = request["object"]
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp") or request["trigger"]["type"] == "DELETED":
        return kubeloop.respond([])
    name = meta["name"]
    wanted = (meta.get("annotations") or {}).get(ANNOTATION) == "true"
    if wanted and (meta.get("labels") or {}).get(LABEL) != name and len(name) > MAX_LABEL_VALUE:
        message = f"pod name {name!r} has {len(name)} characters; label {LABEL} holds at most {MAX_LABEL_VALUE}"
        return kubeloop.respond([kubeloop.event("Warning", "PodNameTooLong", message)])

    def label(draft):
        labels = draft["metadata"].get("labels")
        if wanted:
            draft["metadata"]["labels"] = {**(labels or {}), LABEL: name}
        elif labels is not None:
            labels.pop(LABEL, None)

    return kubeloop.respond([kubeloop.patch_action(pod, label)])


if __name__ == "__main__":
    kubeloop.serve(pod_name_label)
