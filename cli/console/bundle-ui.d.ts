// Types of cli/console/bundle-ui.js (plain JavaScript: the package build runs it before anything is compiled).
import type { ConsoleAssets } from './ui-assets.ts';

export function bundleConsoleUi(): Promise<ConsoleAssets>;
export function writeConsoleUi(dist: string): Promise<string>;
