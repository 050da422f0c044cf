// The at function as served by `kubeloop function at`; config is read once here.
import { defineFunction } from '../../lib/sdk/index.ts';
import { readAtConfig } from './config.ts';
import { reconcileAt } from './reconcile.ts';

const config = readAtConfig();

export default defineFunction({
  name: 'at',
  reconcile: (request) => reconcileAt(request, config),
});
