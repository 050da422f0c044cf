// Settings of the podset function, read once from the environment at start-up.
import { readImageReference } from '../env-settings.ts';

export interface PodSetConfig {
  /** Image of the default container, used when a PodSet has no spec.template. */
  image: string;
}

export const PODSET_IMAGE_ENV = 'KUBELOOP_PODSET_IMAGE';
export const PODSET_DEFAULTS: PodSetConfig = Object.freeze({ image: 'busybox:1.36' });

export function readPodSetConfig(env: NodeJS.ProcessEnv = process.env): PodSetConfig {
  return Object.freeze({ image: readImageReference(env, PODSET_IMAGE_ENV, PODSET_DEFAULTS.image) });
}
