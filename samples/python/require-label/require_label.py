#!/usr/bin/env python3
"""require-label in Python on the kubeloop SDK (sdk/python): a validating admission function that denies
objects without a label (KUBELOOP_REQUIRED_LABEL, default "team"), naming what to add. The same recorded
cases as the TypeScript function (test/fixtures/require-label) pass."""
import os

import kubeloop

LABEL = os.environ.get("KUBELOOP_REQUIRED_LABEL", "").strip() or "team"


@kubeloop.admission("require-label", type="validating")
def require_label(request):
    obj = request.get("object")
    if obj is None:  # DELETE carries no object: nothing to check
        return kubeloop.allow()
    meta = obj.get("metadata") or {}
    if (meta.get("labels") or {}).get(LABEL, "").strip():
        return kubeloop.allow()
    name = meta.get("name") or f"{meta.get('generateName', '')}*"
    where = f" in namespace {request['namespace']}" if request.get("namespace") else ""
    message = f'{obj["kind"]} "{name}"{where} needs a "{LABEL}" label (add metadata.labels.{LABEL})'
    return kubeloop.deny(message, code=422, reason="Invalid", audit_annotations={"missing": LABEL})


if __name__ == "__main__":
    kubeloop.serve(require_label)
