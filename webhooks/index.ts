// Public surface of the admission gateway, what the CLI and the benchmarks take from it (as router/index.ts):
// start it and read its flags, resolve a hook the gateway's way, turn a review into a function request and
// back, and the names other tools must agree on (configurations, the API server's client, admission history).
export { startWebhook, type RunningWebhook } from './run-webhook.ts';
export { readWebhookConfig, WEBHOOK_USAGE, type WebhookConfig } from './config.ts';
export { createWebhookServer } from './server.ts';

// A hook and one admission, the gateway's way (`kubeloop diff --hook`, the admission benchmarks).
export { DEV_HOOK_POLICY, resolveHook, type ResolvedHook } from './base/hook-spec.ts';
export { MalformedReviewError, parseAdmissionReview, reviewResponse, type AdmissionReview } from './gateway/admission-review.ts';
export { toFunctionRequest, toReviewResponse } from './gateway/hook-review.ts';
export { FunctionCaller } from './gateway/function-caller.ts';
export { NO_CONTEXT } from './gateway/context-cache.ts';

// Names shared with the local control plane, `kubeloop certs` and `kubeloop dev`.
export { DEFAULT_HOOK_CONFIGURATION_NAME } from './lifecycle/hook-configuration.ts';
export { tenantConfigurationName } from './lifecycle/hook-configuration-shards.ts';
export { API_SERVER_WEBHOOK_CLIENT_NAME } from './gateway/api-server-authentication.ts';

// The admission history and its API (the console).
export type { AdmissionRecord } from './gateway/admission-history.ts';
export { ADMISSIONS_GROUP, ADMISSIONS_VERSION, hookHistoryPath, type HookHistory } from './history/admission-history-documents.ts';
