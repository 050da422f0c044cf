// Types of cli/deferred-requires.js (plain JavaScript: the build runs it before anything is compiled).
import type { Plugin } from 'esbuild';

export declare const DEFERRED_REQUIRES: Record<string, ReadonlyArray<readonly [string, string]>>;
export declare function deferRequires(file: string, source: string): string;
export declare const deferredRequires: Plugin;
