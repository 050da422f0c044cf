"""Related objects (docs/contract.md, "Related objects"): what the router sent under a Loop's spec.related
entry, or under a name the function asked for with `requires`."""


def related_of(request, name):
    """The objects sent under the related entry `name`; [] when none matched or the entry was not sent."""
    return list((request.get("related") or {}).get(name) or [])


def related_named(request, name, object_name, namespace=None):
    """The object called `object_name` (in `namespace`, when given) under the related entry `name`, or None."""
    for obj in related_of(request, name):
        meta = obj.get("metadata") or {}
        if meta.get("name") == object_name and (namespace is None or meta.get("namespace") == namespace):
            return obj
    return None


def requires(name, api_version, kind, names=None, selector=None, namespace=None):
    """One entry of a response's `requires`: objects the function needs and was not sent."""
    entry = {"name": name, "apiVersion": api_version, "kind": kind}
    if names is not None:
        entry["names"] = [names] if isinstance(names, str) else list(names)
    if selector is not None:
        entry["selector"] = selector
    if namespace is not None:
        entry["namespace"] = namespace
    return entry
