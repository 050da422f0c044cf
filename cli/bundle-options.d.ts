// Types of cli/bundle-options.js (plain JavaScript: the build runs it before anything is compiled).
import type { BuildOptions, Plugin } from 'esbuild';

export declare const builtinsThroughRequire: Plugin;
export declare const lazyTlsBuiltins: Plugin;
export declare const productionPlugins: Plugin[];
export declare function productionBundleOptions(outdir: string): BuildOptions;
