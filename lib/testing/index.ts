// kubeloop/testing: what a function project's tests need: request builders (reconcile and admission), an
// in-process server on a free port, and fixture replay (the same comparison as `kubeloop replay`).
export { kubeObject, requestFor, variant, type RequestParts } from './requests.ts';
export { admissionRequestFor, type AdmissionRequestParts } from './admission-requests.ts';
export { serveForTest, type TestServer } from './serve.ts';
export { describeFailures, replayFixtures } from './replay.ts';
export { compareResponses, loadFixtures, parseFixture, replayFixture, type Fixture, type FileReplayResult, type ReplayResult } from '../replay/index.ts';
