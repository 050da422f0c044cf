// --signing-secret / --signing-secret-file for the commands that call a function as the router would
// (`replay`, `conformance`): the Standard Webhooks secret, read and checked once, or a usage error.
import { readFileSync } from 'node:fs';
import { parseSigningSecrets, type SigningKeys } from '../lib/signing/webhook-signature.ts';

export const SIGNING_FLAG_OPTIONS = {
  'signing-secret': { type: 'string' },
  'signing-secret-file': { type: 'string' },
} as const;

export const SIGNING_FLAGS_HELP = `  --signing-secret WHSEC       sign requests with this Standard Webhooks secret ("whsec_..."; several
                               space-separated during a rotation) and require signed replies, as the router does
  --signing-secret-file PATH   the same, read from a file (a mounted Secret key)`;

export type SigningFlags = { ok: true; keys?: SigningKeys; secret?: string } | { ok: false; message: string };

export function readSigningFlags(values: { 'signing-secret'?: string | undefined; 'signing-secret-file'?: string | undefined }): SigningFlags {
  const inline = values['signing-secret'];
  const file = values['signing-secret-file'];
  if (inline !== undefined && file !== undefined) return { ok: false, message: 'give either --signing-secret or --signing-secret-file, not both' };
  let secret = inline;
  let source = '--signing-secret';
  if (file !== undefined) {
    source = `--signing-secret-file (${file})`;
    try {
      secret = readFileSync(file, 'utf8');
    } catch (error) {
      return { ok: false, message: `--signing-secret-file: cannot read "${file}": ${(error as NodeJS.ErrnoException).code ?? String(error)}` };
    }
  }
  if (secret === undefined) return { ok: true };
  try {
    return { ok: true, keys: parseSigningSecrets(secret, source), secret: secret.trim() };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}
