// Settings of the at function, read once from the environment at start-up.
import { readImageReference } from '../env-settings.ts';

export interface AtConfig {
  /** Image that runs the command when an At has no spec.image. */
  image: string;
}

export const AT_IMAGE_ENV = 'KUBELOOP_AT_IMAGE';
export const AT_DEFAULTS: AtConfig = Object.freeze({ image: 'busybox:1.36' });

export function readAtConfig(env: NodeJS.ProcessEnv = process.env): AtConfig {
  return Object.freeze({ image: readImageReference(env, AT_IMAGE_ENV, AT_DEFAULTS.image) });
}
