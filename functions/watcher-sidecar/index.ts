// The Watcher sidecar injector as served by `kubeloop function watcher-sidecar`; a pod naming a Watcher
// that does not exist is admitted with a warning, or denied with KUBELOOP_MISSING_WATCHER=deny.
import { defineAdmission } from '../../lib/sdk/index.ts';
import { pickSetting, settingOneOf } from '../../lib/config/settings.ts';
import { admitWatcherSidecar, type MissingWatcherPolicy } from './admit.ts';

const missingWatcher: MissingWatcherPolicy = settingOneOf(pickSetting({}, process.env, '', 'KUBELOOP_MISSING_WATCHER'), 'allow', ['allow', 'deny']);

export default defineAdmission({ name: 'watcher-sidecar', type: 'mutating', admit: (request) => admitWatcherSidecar(request, { missingWatcher }) });
