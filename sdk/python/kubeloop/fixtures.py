"""Recorded events (docs/contract.md, "Recorded events"): load <case>.json fixtures and run them through a
function in-process, comparing under the contract's ordering rules. `kubeloop replay --to <url>` is the
full check over HTTP (it also judges patches by their effect and reads event messages only with --strict)."""
import json
import os

from .core import _schema
from .schema import validate


def load_fixtures(path):
    """[(name, fixture)] for a file, or every *.json directly inside a folder (sorted)."""
    files = [os.path.join(path, f) for f in sorted(os.listdir(path)) if f.endswith(".json")] if os.path.isdir(path) else [path]
    loaded = []
    for file in files:
        with open(file, encoding="utf-8") as handle:
            fixture = json.load(handle)
        side = "admission" if fixture.get("request", {}).get("kind") == "AdmissionRequest" else "reconcile"
        errors = validate(_schema(f"{side}-request"), fixture.get("request")) + validate(_schema(f"{side}-response"), fixture.get("response"))
        if errors:
            raise ValueError(f"{file}: not a valid fixture: {'; '.join(errors[:5])}")
        loaded.append((os.path.splitext(os.path.basename(file))[0], fixture))
    return loaded


def _target_key(action):
    target = action.get("target") or action.get("object", {})
    meta = target.get("metadata", {}) if "object" in action else target
    return (target.get("apiVersion"), target.get("kind"), meta.get("namespace"), meta.get("name") or meta.get("generateName"))


def _normalised(response):
    """What the router's behaviour depends on: actions per target in order, status actions in order, events
    as a set of (type, reason), and the other fields."""
    if response.get("kind") == "AdmissionResponse":
        return response
    per_target, statuses, events = {}, [], []
    for action in response.get("actions", []):
        if action["op"] == "event":
            events.append((action["type"], action["reason"]))
        elif action["op"] == "status":
            statuses.append(action["status"])
        else:
            per_target.setdefault(json.dumps(_target_key(action)), []).append(action)
    rest = {k: v for k, v in response.items() if k != "actions"}
    return {"targets": per_target, "statuses": statuses, "events": sorted(events), **rest}


def check_fixture(function, fixture):
    """None when the function answers the fixture's request as recorded, else a message with both replies."""
    actual = function.call(fixture["request"])
    if _normalised(actual) == _normalised(fixture["response"]):
        return None
    return f"expected {json.dumps(fixture['response'], sort_keys=True)}\n     got {json.dumps(actual, sort_keys=True)}"


def run_fixtures(function, path):
    """[(name, None | mismatch message)] for every fixture under `path`."""
    return [(name, check_fixture(function, fixture)) for name, fixture in load_fixtures(path)]
