// The setup of the PodSet suites whose router runs behind a lagging cache: a router harness with the PodSet CRD,
// the test's own direct watch of the suite's pods (what actually exists) and a proxy holding the router's watches back.
import type { V1Pod } from '@kubernetes/client-node';
import type { Informer } from '../../lib/kube/informer.ts';
import { startLaggingProxy, type LaggingProxy } from './router-lagging-proxy.ts';
import { installCrds, routerHarness, watchPods, type RouterHarness } from '../support/router-harness.ts';

export interface LaggingPodSetSuite {
  h: RouterHarness;
  ns: string;
  pods: Informer<V1Pod>;
  proxy: LaggingProxy;
  close(): Promise<void>;
}

export async function laggingPodSetSuite(suiteName: string, lagMs: number): Promise<LaggingPodSetSuite> {
  const h = await routerHarness(suiteName);
  let pods: Informer<V1Pod> | undefined;
  try {
    await installCrds(h.client, ['podsets.app.kubeloop.dev.yaml']);
    pods = await watchPods(h.client, h.suite.namespace);
    const proxy = await startLaggingProxy(h.suite.kubeConfig, lagMs);
    const watched = pods;
    return {
      h,
      ns: h.suite.namespace,
      pods: watched,
      proxy,
      close: async () => {
        await watched.stop();
        await proxy.close();
        await h.close();
      },
    };
  } catch (error) {
    await pods?.stop();
    await h.close();
    throw error;
  }
}
