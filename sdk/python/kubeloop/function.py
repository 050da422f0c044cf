"""A kubeloop function in Python: define_function(name, reconcile) for a Loop, define_admission(name, type,
admit) for an AdmissionHook. Both wrap a pure function of the request (a dict, as the JSON arrives)."""
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict

Request = Dict[str, Any]
Response = Dict[str, Any]

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class Function:
    name: str
    # "reconcile" (a Loop's function) or "admission" (an AdmissionHook's).
    kind: str
    call: Callable[[Request], Response]
    # For admission functions: "validating" (no patch allowed) or "mutating".
    admission_type: str = ""

    @property
    def request_kind(self):
        return "AdmissionRequest" if self.kind == "admission" else "ReconcileRequest"

    @property
    def paths(self):
        return ("/", "/admit") if self.kind == "admission" else ("/", "/reconcile")


def _check_name(name):
    if not _NAME.match(name) or len(name) > 63:
        raise ValueError(f'function name "{name}" must be a DNS label (lower-case letters, digits, "-")')


def define_function(name, reconcile):
    """reconcile(request) -> respond([...]): pure, no I/O, no clock (use request["now"])."""
    _check_name(name)
    return Function(name=name, kind="reconcile", call=reconcile)


def define_admission(name, type, admit):  # noqa: A002 (the contract's word)
    """admit(request) -> allow() | deny(message) | mutate(request, change) for type "validating" or "mutating"."""
    _check_name(name)
    if type not in ("validating", "mutating"):
        raise ValueError(f'admission type "{type}" must be "validating" or "mutating"')
    return Function(name=name, kind="admission", call=admit, admission_type=type)


def function(name):
    """Decorator form of define_function: @function("my-function") over def reconcile(request)."""
    return lambda reconcile: define_function(name, reconcile)


def admission(name, type):  # noqa: A002
    """Decorator form of define_admission."""
    return lambda admit: define_admission(name, type, admit)
