"""Standard Webhooks signing as docs/contract.md ("Signed calls") specifies it: HMAC-SHA256 over
"<webhook-id>.<webhook-timestamp>.<body>" with a key derived from the "whsec_" secret for one direction
and audience, "v1,<base64>" signatures, a 5-minute tolerance, several space-separated keys in a rotation.

`derive`, `sign` and `verify` are the only functions that know the scheme: when the contract's scheme
changes, they change, and nothing else in the SDK does."""
import base64
import binascii
import hashlib
import hmac
import re
import time
import uuid

SECRET_PREFIX = "whsec_"
TOLERANCE_SECONDS = 5 * 60
MAX_KEYS = 4
_ID = re.compile(r"^[^.\s]{1,256}$")
AUDIENCE_HEADER = "x-kubeloop-audience"
# "loop/<name>" for a ClusterLoop, "loop/<namespace>/<name>" for a namespaced Loop (likewise "hook/...").
_AUDIENCE = re.compile(r"^[a-z]+/(?:[a-z0-9][a-z0-9-]{0,62}/)?[a-z0-9][a-z0-9.-]{0,252}$")
MISSING_AUDIENCE = f'missing or malformed {AUDIENCE_HEADER} header: want "loop/[<namespace>/]<name>" or "hook/[<namespace>/]<name>"'


class SigningSecretError(ValueError):
    """A secret that is not "whsec_" + base64 of 24 to 64 bytes; the message never shows the secret."""


def parse_secrets(text, source="signing secret"):
    """The keys of one or more space-separated "whsec_..." secrets (new and old during a rotation)."""
    parts = text.split()
    if not parts:
        raise SigningSecretError(f"{source} is empty")
    if len(parts) > MAX_KEYS:
        raise SigningSecretError(f"{source} holds {len(parts)} keys; at most {MAX_KEYS}")
    keys = []
    for part in parts:
        encoded = part[len(SECRET_PREFIX):] if part.startswith(SECRET_PREFIX) else part
        try:
            key = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise SigningSecretError(f'{source} is not "{SECRET_PREFIX}" followed by base64') from None
        if not 24 <= len(key) <= 64:
            raise SigningSecretError(f"{source} decodes to {len(key)} bytes; want 24 to 64 random bytes")
        keys.append(key)
    return keys


def derive(keys, direction, audience):
    """The keys of one direction ("request" or "reply") and audience ("loop/<name>", "hook/<name>"):
    HMAC-SHA256(secret key, "kubeloop.dev/signing/v1 <direction> <audience>") for each secret key.
    Nothing is signed with a secret's key itself, so a reply never passes as a request, nor a message
    for one Loop or hook as one for another."""
    label = f"kubeloop.dev/signing/v1 {direction} {audience}".encode()
    return [hmac.new(key, label, hashlib.sha256).digest() for key in keys]


def request_audience(headers):
    """The audience a request names in x-kubeloop-audience, when well-formed; else None."""
    audience = headers.get(AUDIENCE_HEADER)
    return audience if audience is not None and _AUDIENCE.match(audience) else None


def verify_request(keys, headers, body, now=None):
    """(True, (webhook-id, audience)) when the request is signed with the request keys of the audience
    it names, fresh; else (False, why)."""
    audience = request_audience(headers)
    if audience is None:
        return False, MISSING_AUDIENCE
    ok, detail = verify(derive(keys, "request", audience), headers, body, now=now)
    return (True, (detail, audience)) if ok else (False, detail)


def sign_reply(keys, audience, message_id, body, now=None):
    """The reply headers for a verified request: its webhook-id, the reply keys of its audience."""
    return sign(derive(keys, "reply", audience), body, message_id=message_id, now=now)


def _signature(key, message_id, timestamp, body):
    content = f"{message_id}.{timestamp}.".encode() + body
    return base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()


def sign(keys, body, message_id=None, now=None):
    """The three headers for `body` (bytes): one "v1," signature per key, a fresh id unless given."""
    message_id = message_id or f"msg_{uuid.uuid4()}"
    timestamp = int(time.time() if now is None else now)
    signatures = " ".join("v1," + _signature(key, message_id, timestamp, body) for key in keys)
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": signatures}


def verify(keys, headers, body, now=None):
    """(True, webhook-id) when a signature matches `body` with any key and the timestamp is fresh,
    else (False, why). `headers` maps lower-case names to values."""
    message_id = headers.get("webhook-id")
    timestamp_text = headers.get("webhook-timestamp")
    offered = headers.get("webhook-signature")
    if message_id is None or timestamp_text is None or offered is None:
        return False, "missing signature: want one each of the webhook-id, webhook-timestamp and webhook-signature headers"
    if not _ID.match(message_id):
        return False, 'webhook-id must be 1 to 256 characters without "." or spaces'
    if not re.fullmatch(r"[0-9]{1,12}", timestamp_text):
        return False, "webhook-timestamp must be Unix seconds"
    timestamp = int(timestamp_text)
    current = int(time.time() if now is None else now)
    if current - timestamp > TOLERANCE_SECONDS:
        return False, f"webhook-timestamp is {current - timestamp} s old; at most {TOLERANCE_SECONDS} s is accepted (stale or replayed)"
    if timestamp - current > TOLERANCE_SECONDS:
        return False, f"webhook-timestamp is {timestamp - current} s in the future; at most {TOLERANCE_SECONDS} s is accepted"
    given = [part[3:] for part in offered.split(" ") if part.startswith("v1,")]
    for key in keys:
        expected = _signature(key, message_id, timestamp, body)
        if any(hmac.compare_digest(expected, candidate) for candidate in given):
            return True, message_id
    return False, "no webhook-signature matches the body with " + ("this key" if len(keys) == 1 else f"any of these {len(keys)} keys")

