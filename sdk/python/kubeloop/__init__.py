"""kubeloop functions in Python (standard library only): define a reconcile or admission function, build
its reply with the action helpers, serve it over HTTP (plain JSON and CloudEvents, Standard Webhooks
signing) and check it against recorded fixtures. The contract: docs/contract.md (kubeloop.dev/v1)."""
from .actions import (
    allow,
    allow_with_patch,
    apply,
    controller_reference,
    create,
    delete,
    deny,
    diff,
    event,
    mutate,
    patch,
    patch_action,
    permanent_error,
    pointer,
    respond,
    status,
    status_action,
    target_of,
    temporary_error,
)
from .core import API_VERSION, EVENT_TYPE, RESPONSE_EVENT_TYPE, handle
from .fixtures import check_fixture, load_fixtures, run_fixtures
from .related import related_named, related_of, requires
from .function import Function, admission, define_admission, define_function, function
from .server import serve

__all__ = [
    "API_VERSION", "EVENT_TYPE", "RESPONSE_EVENT_TYPE", "Function", "admission", "allow", "allow_with_patch", "apply",
    "check_fixture", "controller_reference", "create", "define_admission", "define_function", "delete", "deny", "diff",
    "event", "function", "handle", "load_fixtures", "mutate", "patch", "patch_action", "permanent_error", "pointer",
    "related_named", "related_of", "requires", "respond", "run_fixtures", "serve", "status", "status_action", "target_of", "temporary_error",
]
