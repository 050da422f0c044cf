// The config-reloader function (docs/writing-a-function.md, "Related objects"; its Loop: samples/related/config-reloader.yaml).
import { defineFunction } from '../../lib/sdk/index.ts';
import { reconcileConfigReloader } from './reconcile.ts';

export default defineFunction({ name: 'config-reloader', reconcile: reconcileConfigReloader });
