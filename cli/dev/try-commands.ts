// The commands `kubeloop dev` suggests, one per seed tutorial: annotate a pod (pod-name-label), scale a PodSet,
// schedule an At; then, with the history API registered, why the PodSet looks as it does. Built from the
// applied samples so the names match what exists.
import type { Manifest } from './apply-manifests.ts';

export interface TryCommand {
  what: string;
  command: string;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `history`: `kubeloop history` reaches the router (dev registered its history API), and the podset Loop runs. */
export function tryCommandList(samples: Manifest[], now: Date, history = false): TryCommand[] {
  const podsetSample = samples.find((m) => m.kind === 'PodSet');
  const podset = podsetSample?.metadata.name ?? 'podset-sample';
  const inThirtySeconds = new Date(Math.ceil((now.getTime() + 30_000) / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const at = {
    apiVersion: 'cnat.kubeloop.dev/v1alpha1',
    kind: 'At',
    metadata: { name: 'at-demo' },
    spec: { schedule: inThirtySeconds, command: 'echo hello from kubeloop' },
  };
  return [
    {
      what: `label the PodSet's pods with their names (pod-name-label)`,
      command: `kubectl annotate pods -l app=${podset} kubeloop.dev/add-pod-name-label=true --overwrite && kubectl get pods -l app=${podset} -L kubeloop.dev/pod-name`,
    },
    {
      what: 'scale a PodSet from 3 to 5 pods (podset)',
      command: `kubectl patch podset ${podset} --type=merge -p '{"spec":{"replicas":5}}' && kubectl get podset ${podset}`,
    },
    {
      what: `run a command 30 s from now (at: PENDING -> RUNNING -> DONE; add -w to watch)`,
      command: `echo ${shellQuote(JSON.stringify(at))} | kubectl apply -f - && kubectl get ats`,
    },
    ...(history
      ? [
          {
            what: `why the PodSet looks as it does: its last reconciles, their triggers and writes (the router's flight recorder, through the API server)`,
            command: `npx kubeloop history --cluster-loop podset -n ${podsetSample?.metadata.namespace ?? 'default'} ${podset}`,
          },
        ]
      : []),
  ];
}

export function tryCommands(kubeconfigPath: string, samples: Manifest[], now: Date, history = false): string[] {
  return [
    `  export KUBECONFIG=${kubeconfigPath}`,
    ...tryCommandList(samples, now, history).flatMap((c, i) => [`  # ${i + 1}. ${c.what}`, `  ${c.command}`]),
  ];
}
