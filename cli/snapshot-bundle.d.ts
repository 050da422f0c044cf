// Types of cli/snapshot-bundle.js (plain JavaScript: the build runs it before anything is compiled).
import type { BuildOptions, StdinOptions } from 'esbuild';

export declare const ALLOWED_STAND_INS: Map<string, string>;
export declare function snapshotBundleOptions(outfile: string): BuildOptions;
export declare function routerSnapshotEntry(commandModule?: string): StdinOptions;
