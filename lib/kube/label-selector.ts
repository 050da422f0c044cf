// Kubernetes label selectors: matching labels in memory and rendering the labelSelector query string.
import type { V1LabelSelector } from '@kubernetes/client-node';

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** Throws an error naming the bad part when the selector is not valid. */
export function validateLabelSelector(selector: V1LabelSelector, where = 'selector'): void {
  for (const [i, expr] of (selector.matchExpressions ?? []).entries()) {
    if (!OPERATORS.has(expr.operator)) {
      throw new Error(`${where}.matchExpressions[${i}].operator "${expr.operator}" is not one of In, NotIn, Exists, DoesNotExist`);
    }
    const needsValues = expr.operator === 'In' || expr.operator === 'NotIn';
    if (needsValues && !(expr.values && expr.values.length > 0)) {
      throw new Error(`${where}.matchExpressions[${i}] with operator ${expr.operator} needs values`);
    }
    if (!needsValues && expr.values && expr.values.length > 0) {
      throw new Error(`${where}.matchExpressions[${i}] with operator ${expr.operator} must not have values`);
    }
  }
}

export function matchesLabelSelector(selector: V1LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const present = Object.prototype.hasOwnProperty.call(have, expr.key);
    const value = have[expr.key];
    switch (expr.operator) {
      case 'In':
        if (!present || !(expr.values ?? []).includes(value as string)) return false;
        break;
      case 'NotIn':
        if (present && (expr.values ?? []).includes(value as string)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** The `labelSelector` query parameter for a selector, or undefined when it selects everything. */
export function labelSelectorQuery(selector: V1LabelSelector | undefined): string | undefined {
  if (!selector) return undefined;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) parts.push(`${key}=${value}`);
  for (const expr of selector.matchExpressions ?? []) {
    const values = [...(expr.values ?? [])].sort().join(',');
    if (expr.operator === 'In') parts.push(`${expr.key} in (${values})`);
    else if (expr.operator === 'NotIn') parts.push(`${expr.key} notin (${values})`);
    else if (expr.operator === 'Exists') parts.push(expr.key);
    else if (expr.operator === 'DoesNotExist') parts.push(`!${expr.key}`);
  }
  return parts.length === 0 ? undefined : parts.join(',');
}
