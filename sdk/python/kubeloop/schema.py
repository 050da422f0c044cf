"""The contract's JSON Schemas (draft-07, copied from the repository's schemas/ folder) and the subset of
JSON Schema they use, so requests and replies are checked against the same documents as the router's."""
import json
import re
from importlib import resources

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def load_schema(name):
    """One of reconcile-request, reconcile-response, admission-request, admission-response."""
    return json.loads(resources.files("kubeloop").joinpath("schemas").joinpath(f"{name}.json").read_text("utf-8"))


def _ecma_end(pattern):
    """ECMA-262 "$" is the end of the string; Python's also matches before a final newline."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern


def _at(path):
    return path or "(root)"


def validate(schema, value, path="", errors=None):
    """Every way `value` breaks `schema`, as "<json pointer>: <what>" strings (empty when it is valid)."""
    errors = [] if errors is None else errors
    if schema is True or schema == {}:
        return errors
    if schema is False:
        errors.append(f"{_at(path)}: is not allowed")
        return errors
    if "const" in schema and value != schema["const"]:
        errors.append(f"{_at(path)}: must be {json.dumps(schema['const'])}")
        return errors
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{_at(path)}: must be one of {', '.join(json.dumps(e) for e in schema['enum'])}")
        return errors
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_TYPES[k](value) for k in kinds):
            errors.append(f"{_at(path)}: must be {' or '.join(kinds)}")
            return errors
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{_at(path)}: must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{_at(path)}: must have at most {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(_ecma_end(schema["pattern"]), value):
            errors.append(f"{_at(path)}: must match {schema['pattern']}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{_at(path)}: must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{_at(path)}: must be <= {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{_at(path)}: must have at least {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                validate(schema["items"], item, f"{path}/{i}", errors)
    if isinstance(value, dict):
        _validate_object(schema, value, path, errors)
    _validate_combinators(schema, value, path, errors)
    return errors


def _validate_object(schema, value, path, errors):
    for name in schema.get("required", []):
        if name not in value:
            errors.append(f"{_at(path)}: must have required property '{name}'")
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, member in value.items():
        child = f"{path}/{name.replace('~', '~0').replace('/', '~1')}"
        if "propertyNames" in schema:
            validate(schema["propertyNames"], name, child, errors)
        if name in properties:
            validate(properties[name], member, child, errors)
        elif extra is False:
            errors.append(f"{_at(path)}: must not have property '{name}'")
        elif isinstance(extra, dict):
            validate(extra, member, child, errors)


def _validate_combinators(schema, value, path, errors):
    if "oneOf" in schema:
        branches = schema["oneOf"]
        tag = schema.get("discriminator", {}).get("propertyName")
        if tag and isinstance(value, dict):
            # Judge the branch the tag names, so the message is about that branch's fields.
            named = [b for b in branches if b.get("properties", {}).get(tag, {}).get("const") == value.get(tag)]
            if not named:
                allowed = ", ".join(json.dumps(b["properties"][tag]["const"]) for b in branches)
                errors.append(f"{path}/{tag}: must be one of {allowed}")
            else:
                validate(named[0], value, path, errors)
        elif sum(1 for b in branches if not validate(b, value, path)) != 1:
            errors.append(f"{_at(path)}: must match exactly one schema in oneOf")
    if "anyOf" in schema and not any(not validate(b, value, path) for b in schema["anyOf"]):
        errors.append(f"{_at(path)}: must match a schema in anyOf")
    if "if" in schema and not validate(schema["if"], value, path):
        validate(schema.get("then", True), value, path, errors)
