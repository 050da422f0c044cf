// The require-label function as served by `kubeloop function require-label` (KUBELOOP_REQUIRED_LABEL, default "team").
import { defineAdmission } from '../../lib/sdk/index.ts';
import { admitRequireLabel } from './admit.ts';

const label = process.env.KUBELOOP_REQUIRED_LABEL?.trim() || 'team';
if (!/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(label)) {
  throw new Error(`KUBELOOP_REQUIRED_LABEL: "${label}" is not a label key`);
}

export default defineAdmission({ name: 'require-label', type: 'validating', admit: (request) => admitRequireLabel(request, { label }) });
