// The pod-name-label function as served by `kubeloop function pod-name-label`; config is read once here.
import { defineFunction } from '../../lib/sdk/index.ts';
import { readPodNameLabelConfig } from './config.ts';
import { reconcilePodNameLabel } from './reconcile.ts';

const config = readPodNameLabelConfig();

export default defineFunction({
  name: 'pod-name-label',
  reconcile: (request) => reconcilePodNameLabel(request, config),
});
