// pod-name-label with its defaults, as the workerd test workers serve it.
import { POD_NAME_LABEL_DEFAULTS } from '../../../functions/pod-name-label/config.ts';
import { reconcilePodNameLabel } from '../../../functions/pod-name-label/reconcile.ts';
import { defineFunction } from '../../../lib/sdk/define-function.ts';

export const podNameLabel = defineFunction({ name: 'pod-name-label', reconcile: (request) => reconcilePodNameLabel(request, POD_NAME_LABEL_DEFAULTS) });
