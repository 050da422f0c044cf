// The watcher function as served by `kubeloop function watcher`; it has no settings.
import { defineFunction } from '../../lib/sdk/index.ts';
import { reconcileWatcher } from './reconcile.ts';

export default defineFunction({ name: 'watcher', reconcile: reconcileWatcher });
