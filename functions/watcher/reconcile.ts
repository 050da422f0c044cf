// Seed 003: a Watcher owns a ConfigMap "<watcher>-config" holding spec.configData and
// spec.configBinaryData; created when missing, patched only when its data drifted, status names it.
import {
  childrenKey,
  create,
  event,
  isControlledBy,
  jsonEqual,
  missingChildren,
  patchAction,
  respond,
  statusAction,
  controllerReferenceTo,
  type KubeObject,
  type ReconcileRequest,
  type ReconcileResponse,
} from '../../lib/sdk/index.ts';
import { defaultConfigMapName, type Watcher, type WatcherStatus } from '../../api/watcher.ts';

export const CONFIGMAP_CHILDREN = childrenKey('v1', 'ConfigMap');

type ConfigMap = KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> };

const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]+$/;
const MAX_NAME_LENGTH = 253;

/** What the API server would refuse in a ConfigMap, said in terms of the Watcher's fields. */
export function configDataProblem(data: Record<string, string>, binaryData: Record<string, string>): string | undefined {
  for (const [field, map] of [['configData', data], ['configBinaryData', binaryData]] as const) {
    const bad = Object.keys(map).find((key) => key.length > MAX_NAME_LENGTH || !CONFIGMAP_KEY.test(key));
    if (bad !== undefined) return `spec.${field} key "${bad}" is not a valid ConfigMap key (letters, digits, '-', '_', '.')`;
  }
  const both = Object.keys(data).find((key) => key in binaryData);
  if (both !== undefined) return `key "${both}" is in both spec.configData and spec.configBinaryData`;
  return undefined;
}

/** Sets or drops a map field: the API server omits empty maps, so an empty desired map means "absent". */
function setMap(target: ConfigMap, field: 'data' | 'binaryData', value: Record<string, string>): void {
  if (Object.keys(value).length === 0) delete target[field];
  else target[field] = value;
}

export function reconcileWatcher(request: ReconcileRequest): ReconcileResponse {
  const watcher = request.object as Watcher;
  if (watcher.metadata?.deletionTimestamp) return respond([]);

  const children = request.children[CONFIGMAP_CHILDREN] as ConfigMap[] | undefined;
  if (!children) return missingChildren(CONFIGMAP_CHILDREN, 'the Watcher Loop must own v1 ConfigMaps');

  const data = watcher.spec?.configData ?? {};
  const binaryData = watcher.spec?.configBinaryData ?? {};
  const problem = configDataProblem(data, binaryData);
  if (problem) return respond([event('Warning', 'InvalidConfigData', problem)], { error: { type: 'permanent', message: problem } });

  const name = defaultConfigMapName(watcher.metadata?.name ?? '');
  if (name.length > MAX_NAME_LENGTH) {
    const message = `ConfigMap name "${name}" would exceed ${MAX_NAME_LENGTH} characters: shorten the Watcher's name`;
    return respond([event('Warning', 'NameTooLong', message)], { error: { type: 'permanent', message } });
  }
  const existing = children.find((cm) => cm.metadata?.name === name && isControlledBy(cm, watcher));

  let configMapAction;
  if (!existing) {
    // The seed created first and updated on AlreadyExists: one failing write per reconcile.
    const configMap: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: watcher.metadata?.namespace, ownerReferences: [controllerReferenceTo(watcher)] },
    };
    setMap(configMap, 'data', data);
    setMap(configMap, 'binaryData', binaryData);
    configMapAction = create(configMap);
  } else if (!jsonEqual(existing.data ?? {}, data) || !jsonEqual(existing.binaryData ?? {}, binaryData)) {
    // The seed compared a ConfigMap with a *ConfigMap (never equal) and so updated on every reconcile.
    configMapAction = patchAction(existing, (draft) => {
      setMap(draft, 'data', data);
      setMap(draft, 'binaryData', binaryData);
    });
  }

  const status: WatcherStatus = { configMapName: name };
  return respond([configMapAction, statusAction(watcher, { ...status })]);
}
