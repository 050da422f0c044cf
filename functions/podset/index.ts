// The podset function as served by `kubeloop function podset`; config is read once here.
import { defineFunction } from '../../lib/sdk/index.ts';
import { readPodSetConfig } from './config.ts';
import { reconcilePodSet } from './reconcile.ts';

const config = readPodSetConfig();

export default defineFunction({
  name: 'podset',
  reconcile: (request) => reconcilePodSet(request, config),
});
