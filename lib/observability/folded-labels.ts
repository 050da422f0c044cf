// A prom-client metric whose label values pass through a fold before they reach it (a BoundedLabel: the first
// N Loops by name, the rest "other"), so the call sites keep naming the Loop and the series stay bounded.
import { OTHER_LABEL } from './bounded-label.ts';

type Labels = Record<string, string | number>;

/** The methods whose first argument may be a label set; `observe` also takes `{ labels, value, exemplarLabels }`. */
const LABELLED = new Set(['inc', 'dec', 'set', 'observe', 'labels', 'startTimer', 'zero']);

function isLabels(value: unknown): value is Labels {
  return typeof value === 'object' && value !== null;
}

/**
 * Wraps `metric` so that every label named in `names` is replaced by `fold(value)` on the way in. `remove` of
 * a value that folds into "other" is skipped: the shared series outlives any one Loop.
 */
export function foldLabels<M extends object>(metric: M, names: readonly string[], fold: (value: string) => string): M {
  const mapped = (labels: Labels): Labels => {
    let out: Labels | undefined;
    for (const name of names) {
      const value = labels[name];
      if (value === undefined) continue;
      const folded = fold(String(value));
      if (folded === value) continue;
      out ??= { ...labels };
      out[name] = folded;
    }
    return out ?? labels;
  };
  const folds = (labels: Labels) => names.some((name) => labels[name] !== undefined && fold(String(labels[name])) === OTHER_LABEL);
  const wrap = (target: M, property: string, original: (...args: unknown[]) => unknown) => {
    if (property === 'remove') {
      return (labels: unknown, ...rest: unknown[]) => (isLabels(labels) && folds(labels) ? undefined : original.call(target, labels, ...rest));
    }
    return (first: unknown, ...rest: unknown[]) => {
      if (!isLabels(first)) return original.call(target, first, ...rest);
      // An exemplar observation carries its label set inside.
      if (property === 'observe' && 'value' in first && isLabels(first.labels)) return original.call(target, { ...first, labels: mapped(first.labels) }, ...rest);
      return original.call(target, mapped(first), ...rest);
    };
  };
  // Made once per method: the hot path (an inc per action) allocates no closure.
  const wrapped = new Map<string, unknown>();
  return new Proxy(metric, {
    get(target, property, receiver) {
      const original: unknown = Reflect.get(target, property, receiver);
      if (typeof original !== 'function' || typeof property !== 'string' || (property !== 'remove' && !LABELLED.has(property))) return original;
      let method = wrapped.get(property);
      if (!method) wrapped.set(property, (method = wrap(target, property, original as (...args: unknown[]) => unknown)));
      return method;
    },
  });
}
