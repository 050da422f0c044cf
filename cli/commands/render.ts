// `kubeloop render <object.yaml> (--function <module> | --to <url>)`: calls a function with an object (and
// its children) from files and prints the actions and the objects as they would look after them, without a
// cluster and without a recorded response (like `crossplane render`); an admission function's decision and patch.
import { readFileSync } from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';
import { CLUSTER_LOOP_KIND, LOOP_KIND } from '../../api/loop.ts';
import type { KindRef } from '../../api/meta.ts';
import { childrenKey } from '../../lib/contract/children-key.ts';
import type { AdmissionOperation, AdmissionRequest, AdmissionResponse } from '../../lib/contract/admission-types.ts';
import type { KubeObject, ReconcileRequest, ReconcileResponse, RequiredResource, TriggerType } from '../../lib/contract/types.ts';
import { isAdmissionDefinition } from '../../lib/sdk/define-admission.ts';
import { validateAdmissionRequest, validateReconcileRequest } from '../../lib/contract/validate.ts';
import { callFunction } from '../../lib/replay/replay-client.ts';
import { serveForTest, type TestServer } from '../../lib/testing/serve.ts';
import { parseCommandArgs } from '../command-args.ts';
import { builtinFunctionsHelp } from '../command-list.ts';
import { FunctionModuleError, loadFunctionByNameOrPath } from '../function-module.ts';
import { buildAdmissionRenderRequest, formatAdmission, renderAdmission, RENDERED_OPERATIONS, type AdmissionRenderOptions } from '../render/admission-render.ts';
import { applyLocally } from '../render/apply-locally.ts';
import { InputError, readObjects } from '../render/read-objects.ts';
import { pickRequired, renderRelated } from '../render/related-input.ts';
import { REQUIRES_LIMITS, sameRequirements } from '../../router/index.ts';
import { metaTime } from '../../lib/kube/meta-time.ts';

const USAGE = `usage: kubeloop render <object.yaml> (--function <name|module> | --to <url>) [--children FILE]...
                       [--related FILE | --related NAME=FILE]... [--loop loop.yaml] [--trigger ADDED] [--now 2026-01-01T00:00:00Z] [--output yaml|json]
       kubeloop render <object.yaml> --function <admission module> [--operation CREATE|UPDATE|DELETE]
                       [--old stored.yaml] [--dry-run]

Sends the object in <object.yaml> (the primary) and the objects in --children files to the function, as the
router would, and prints its actions, the events, and every object the actions touch as it would look after
them (patches and status applied locally). Nothing is read from or written to a cluster.
  --function MODULE  serve this module (default export defineFunction(...)) or built-in name in-process
  --to URL           call a running function instead
  --children FILE    owned objects (YAML or JSON, several documents or a List); repeatable
  --related FILE     objects the Loop's spec.related entries may select (needs --loop); sorted into
                     request.related as the router would, and what the function requires is taken from them
  --related NAME=FILE  these objects as request.related[NAME]; repeatable
  --loop FILE        the Loop or ClusterLoop (its own file, or the first of several documents, as kubeloop init writes it):
                     its name, an empty children list for every kind it owns, its related entries
An admission function (defineAdmission; with --to, any of the next flags says so) gets the AdmissionRequest the
webhook gateway would send; render prints its decision, warnings and the object after its patch:
  --operation OP     CREATE (default), UPDATE (default with --old) or DELETE (<object.yaml> is the deleted object)
  --old FILE         the stored object of an UPDATE
  --dry-run          as for kubectl --dry-run=server
Exit code: 0 rendered (a denial too), 1 the function failed or an action or patch would fail, 2 bad usage or input.
${builtinFunctionsHelp()}`;

const TRIGGERS: TriggerType[] = ['ADDED', 'MODIFIED', 'DELETED', 'RESYNC', 'REQUEUE', 'CHILD', 'RELATED'];

/** The Loop or ClusterLoop in `file`: a file of its own, or the first of several documents (`kubeloop init`'s loop.yaml). */
export function readLoop(file: string): { name: string; owns: KindRef[]; related?: unknown; namespaced: boolean; namespace?: string } {
  let documents;
  try {
    documents = parseAllDocuments(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InputError(`${file}: cannot read: ${(error as Error).message}`);
  }
  const broken = documents.find((doc) => doc.errors[0]);
  if (broken?.errors[0]) throw new InputError(`${file}: not valid YAML: ${broken.errors[0].message.split('\n')[0]}`);
  type LoopDocument = { kind?: string; metadata?: { name?: string; namespace?: string }; spec?: { owns?: KindRef[]; related?: unknown } } | null;
  const loop = documents.map((doc) => doc.toJS() as LoopDocument).find((value) => value?.kind === LOOP_KIND || value?.kind === CLUSTER_LOOP_KIND);
  if (!loop?.metadata?.name) throw new InputError(`${file}: want a Loop (a document with kind: Loop or ClusterLoop and metadata.name)`);
  const namespaced = loop.kind === LOOP_KIND;
  return { name: loop.metadata.name, owns: loop.spec?.owns ?? [], related: loop.spec?.related, namespaced, ...(namespaced && loop.metadata.namespace ? { namespace: loop.metadata.namespace } : {}) };
}

export function buildRenderRequest(
  primary: KubeObject,
  children: KubeObject[],
  options: { loop?: { name: string; owns: KindRef[]; namespaced?: boolean; namespace?: string }; trigger: TriggerType; now: string; related?: Record<string, KubeObject[]> },
): ReconcileRequest {
  const grouped: Record<string, KubeObject[]> = {};
  for (const ref of options.loop?.owns ?? []) grouped[childrenKey(ref.apiVersion, ref.kind)] = [];
  for (const child of children) (grouped[childrenKey(child.apiVersion ?? '', child.kind ?? '')] ??= []).push(child);
  return {
    apiVersion: 'kubeloop.dev/v1',
    kind: 'ReconcileRequest',
    loop: options.loop?.name ?? 'render',
    // A namespaced Loop (kubeloop init's, without a namespace in the file) sees only its own namespace: the primary's.
    ...(options.loop?.namespaced ? { loopNamespace: options.loop.namespace ?? primary.metadata?.namespace ?? 'default' } : {}),
    reconcileId: 'kubeloop-render',
    trigger: { type: options.trigger },
    object: primary,
    children: grouped,
    ...(options.related ? { related: options.related } : {}),
    ...(primary.metadata?.deletionTimestamp ? { finalizing: true } : {}),
    now: options.now,
  };
}

/** The request to send: a ReconcileRequest, or an AdmissionRequest for an admission function. */
function buildRequest(
  files: { primary: string; children: string[]; related: string[]; loop?: string; old?: string },
  options: { admission?: AdmissionRenderOptions; trigger: TriggerType; now: string },
): { request: ReconcileRequest | AdmissionRequest; relatedObjects: KubeObject[] } {
  const primaries = readObjects(files.primary);
  if (primaries.length !== 1 || !primaries[0]) throw new InputError(`${files.primary}: want exactly one object (the primary), found ${primaries.length}; pass the others with --children`);
  if (options.admission) {
    const old = files.old ? readObjects(files.old) : [];
    if (files.old && old.length !== 1) throw new InputError(`${files.old}: want exactly one object (the stored one), found ${old.length}`);
    const request = buildAdmissionRenderRequest(primaries[0], { ...options.admission, ...(old[0] ? { old: old[0] } : {}) });
    const checked = validateAdmissionRequest(request);
    if (!checked.ok) throw new InputError(`the request built from these files is not valid: ${checked.errors.join('; ')}`);
    return { request, relatedObjects: [] };
  }
  const children = files.children.flatMap((file) => readObjects(file));
  const loop = files.loop ? readLoop(files.loop) : undefined;
  const named: Record<string, KubeObject[]> = {};
  const unnamed: KubeObject[] = [];
  for (const arg of files.related) {
    const match = /^([a-z][-a-z0-9]*)=(.+)$/.exec(arg);
    if (match?.[1] && match[2]) named[match[1]] = readObjects(match[2]);
    else unnamed.push(...readObjects(arg));
  }
  const related = renderRelated(primaries[0], loop?.related, unnamed, named);
  const request = buildRenderRequest(primaries[0], children, { ...(loop ? { loop } : {}), trigger: options.trigger, now: options.now, ...(related ? { related } : {}) });
  const checked = validateReconcileRequest(request);
  if (!checked.ok) throw new InputError(`the request built from these files is not valid: ${checked.errors.join('; ')}`);
  return { request, relatedObjects: [...unnamed, ...Object.values(named).flat()] };
}

/** Calls the function as the router would, serving its `requires` rounds from the --related files. */
async function callWithRequires(first: ReconcileRequest, relatedObjects: KubeObject[], url: string): Promise<{ request: ReconcileRequest; response: ReconcileResponse } | { failed: string }> {
  let request = first;
  let sent: RequiredResource[] = [];
  for (let calls = 1; ; calls++) {
    const reply = await callFunction(request, { url });
    if (!reply.ok) return { failed: `the function failed: ${reply.message}` };
    // A ReconcileRequest was sent, so callFunction checked the reply as a ReconcileResponse.
    const response = reply.response as ReconcileResponse;
    const wanted = response.requires ?? [];
    if (sameRequirements(wanted, sent)) return { request, response };
    if (calls >= REQUIRES_LIMITS.calls) return { failed: `the function asked for different objects on each of ${calls} calls (the router stops there: RequiresExceeded)` };
    sent = wanted;
    request = { ...request, related: { ...request.related, ...pickRequired(request.object, wanted, relatedObjects) } };
  }
}

function printReconcile(request: ReconcileRequest, response: ReconcileResponse, output: string): number {
  const rendered = applyLocally(request, response);
  if (output === 'json') {
    console.log(JSON.stringify({ response, ...rendered }, null, 2));
  } else {
    const comments = [
      `# ${response.actions.length} action(s) from the function; objects after them follow`,
      ...rendered.events.map((e) => `# event ${e.type} ${e.reason}: ${e.message}`),
      ...rendered.deleted.map((d) => `# deleted ${d}`),
      ...rendered.problems.map((p) => `# PROBLEM ${p}`),
    ];
    console.log([`${comments.join('\n')}\n${stringify(response)}`, ...rendered.objects.map((o) => stringify(o))].join('---\n'));
  }
  if (rendered.problems.length > 0) console.error(`kubeloop render: ${rendered.problems.length} action(s) would fail:\n  ${rendered.problems.join('\n  ')}`);
  return rendered.problems.length > 0 || response.error ? 1 : 0;
}

function printAdmission(request: AdmissionRequest, response: AdmissionResponse, output: string): number {
  const rendered = renderAdmission(request, response);
  console.log(formatAdmission(request, response, rendered, output));
  if (rendered.problems.length > 0) console.error(`kubeloop render: ${rendered.problems.join('; ')}`);
  return rendered.problems.length > 0 ? 1 : 0;
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'render',
    argv,
    {
      function: { type: 'string' }, to: { type: 'string' }, children: { type: 'string', multiple: true }, related: { type: 'string', multiple: true }, loop: { type: 'string' }, trigger: { type: 'string' }, now: { type: 'string' }, output: { type: 'string', short: 'o' },
      operation: { type: 'string' }, old: { type: 'string' }, 'dry-run': { type: 'boolean' },
    },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  const trigger = (values.trigger ?? 'MODIFIED') as TriggerType;
  const now = values.now ?? metaTime(new Date());
  const output = values.output ?? 'yaml';
  const operation = (values.operation ?? (values.old ? 'UPDATE' : 'CREATE')) as AdmissionOperation;
  const admissionFlags = values.operation !== undefined || values.old !== undefined || values['dry-run'] === true;
  const problems = [
    positionals.length !== 1 && 'give exactly one object file (the primary)',
    !values.function === !values.to && 'give either --function <module> or --to <url>',
    values.to && !/^https?:\/\//.test(values.to) && `--to: "${values.to}" is not an http(s) URL`,
    !TRIGGERS.includes(trigger) && `--trigger: "${trigger}" is not one of ${TRIGGERS.join(', ')}`,
    Number.isNaN(Date.parse(now)) && `--now: "${now}" is not an RFC 3339 time`,
    !['yaml', 'json'].includes(output) && `--output: "${output}" is not yaml or json`,
    !RENDERED_OPERATIONS.includes(operation) && `--operation: "${operation}" is not one of ${RENDERED_OPERATIONS.join(', ')}`,
    values.old && operation !== 'UPDATE' && '--old is the stored object of an UPDATE (a DELETE takes the deleted object as <object.yaml>)',
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0) {
    console.error(`kubeloop render: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }

  let server: TestServer | undefined;
  // An admission function is known by its definition (--function) or, for a running one (--to), by the flags.
  let admission = admissionFlags;
  try {
    if (values.function) {
      const definition = await loadFunctionByNameOrPath(values.function);
      admission = isAdmissionDefinition(definition);
      if (!admission && admissionFlags) throw new FunctionModuleError(`${values.function} is a reconcile function; --operation, --old and --dry-run are for admission functions`);
      server = await serveForTest(definition);
    }
  } catch (error) {
    if (!(error instanceof FunctionModuleError)) throw error;
    console.error(`kubeloop render: --function: ${error.message}`);
    return 2;
  }
  try {
    let request: ReconcileRequest | AdmissionRequest;
    let relatedObjects: KubeObject[];
    try {
      const admissionOptions = admission ? { admission: { operation, dryRun: values['dry-run'] === true, now } } : {};
      ({ request, relatedObjects } = buildRequest({ primary: positionals[0] ?? '', children: values.children ?? [], related: values.related ?? [], ...(values.loop ? { loop: values.loop } : {}), ...(values.old ? { old: values.old } : {}) }, { ...admissionOptions, trigger, now }));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      console.error(`kubeloop render: ${error.message}`);
      return 2;
    }
    const url = values.to ?? `${server?.url ?? ''}/`;
    if (request.kind === 'AdmissionRequest') {
      const reply = await callFunction(request, { url });
      if (!reply.ok) {
        console.error(`kubeloop render: the function failed: ${reply.message}`);
        return 1;
      }
      // callFunction checked the reply against the side of the contract the request was on.
      return printAdmission(request, reply.response as AdmissionResponse, output);
    }
    const called = await callWithRequires(request, relatedObjects, url);
    if ('failed' in called) {
      console.error(`kubeloop render: ${called.failed}`);
      return 1;
    }
    return printReconcile(called.request, called.response, output);
  } finally {
    await server?.close();
  }
}
