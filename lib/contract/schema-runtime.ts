// What the precompiled validators (validators.generated.ts) call at run time: the contract's string formats
// and a code-point length. Plain functions, so the validators need no ajv and no code generation.

/** Formats the contract's schemas use; `date-time` accepts what Date.parse reads (RFC 3339 included). */
export const contractFormats = {
  'date-time': (value: string): boolean => !Number.isNaN(Date.parse(value)),
};

/** A string's length in Unicode code points, as JSON Schema's minLength/maxLength count it. */
export function ucs2length(value: string): number {
  let length = 0;
  for (let i = 0; i < value.length; i++, length++) {
    const code = value.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if ((next & 0xfc00) === 0xdc00) i++;
    }
  }
  return length;
}
