// JSON text spelled as Go's encoding/json spells strings, for request bodies the API server compares byte
// for byte: a JSON patch `test` of a string holds only when its bytes equal the server's own encoding.
/** The characters Go's encoder escapes and JSON.stringify does not (HTML-safe output, JavaScript line separators). */
const GO_ESCAPED = /[<>&\u2028\u2029]/g;

function goEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * JSON.stringify with <, >, &, U+2028 and U+2029 escaped as \u003c, \u003e, \u0026, \u2028 and \u2029, as the
 * API server encodes every object (encoding/json's default). The same JSON value: those characters can stand
 * only inside strings. Needed because the API server's JSON patch (evanphx/json-patch) compares strings as
 * their raw bytes: a test of an annotation holding "&" as JSON.stringify writes it never passes.
 */
export function goJsonStringify(value: unknown): string {
  return JSON.stringify(value).replace(GO_ESCAPED, goEscape);
}
