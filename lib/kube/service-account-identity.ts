// Who a ServiceAccount is to the API server: its user name and groups, as tokens, impersonation and
// SubjectAccessReviews spell them.

/** Whom a client acts as (Impersonate-User); the API server adds a ServiceAccount's groups itself. */
export interface Impersonation {
  user: string;
}

/** The user name of a ServiceAccount, as tokens and impersonation spell it. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The groups every ServiceAccount belongs to (what SubjectAccessReviews must name). */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
}
