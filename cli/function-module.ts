// Resolves what `kubeloop function|replay|render|dev` are told to serve: a built-in function name
// (functions/registry.ts) or a module path (.ts/.mts via tsx, .js/.mjs) whose default export is a
// defineFunction(...) or defineAdmission(...) result.
import { existsSync, statSync } from 'node:fs';
import { extname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { admissionRegistry, functionRegistry, loadAnyFunction } from '../functions/registry.ts';
import type { AnyFunctionDefinition } from '../lib/runtime/function-kinds.ts';
import { defineAdmission, isAdmissionDefinition } from '../lib/sdk/define-admission.ts';
import { defineFunction } from '../lib/sdk/define-function.ts';

/** A mistake of the caller (exit code 2), as opposed to a failure while loading a valid module. */
export class FunctionModuleError extends Error {
  override name = 'FunctionModuleError';
}

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);
const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs', '.cjs', '.cts', '.tsx'];

/** A module path rather than a built-in name: contains a slash or a known extension. */
export function looksLikeModulePath(nameOrPath: string): boolean {
  return nameOrPath.includes('/') || nameOrPath.includes('\\') || MODULE_EXTENSIONS.includes(extname(nameOrPath));
}

/** A reconcile or an admission function: what the runtime serves. */
export type ServableDefinition = AnyFunctionDefinition;

export function isServableDefinition(value: unknown): value is ServableDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { name?: unknown; reconcile?: unknown; admit?: unknown };
  return typeof candidate.name === 'string' && (typeof candidate.reconcile === 'function' || typeof candidate.admit === 'function');
}

let tsxRegistered = false;

/** Lets import() load TypeScript when the CLI itself runs compiled (an installed package). */
async function registerTypeScript(): Promise<void> {
  if (tsxRegistered) return;
  const { register } = await import('tsx/esm/api');
  register();
  tsxRegistered = true;
}

/** A folder means its package.json "main", else index.ts or index.js inside it. */
export function resolveModuleFile(path: string, cwd = process.cwd()): string {
  const absolute = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(absolute)) throw new FunctionModuleError(`${path}: no such file`);
  if (!statSync(absolute).isDirectory()) return absolute;
  for (const candidate of ['src/index.ts', 'index.ts', 'src/index.js', 'index.js']) {
    const file = resolve(absolute, candidate);
    if (existsSync(file)) return file;
  }
  throw new FunctionModuleError(`${path} is a folder without src/index.ts, index.ts, src/index.js or index.js`);
}

export async function loadFunctionModule(path: string, cwd = process.cwd()): Promise<ServableDefinition> {
  const file = resolveModuleFile(path, cwd);
  if (TYPESCRIPT.has(extname(file))) await registerTypeScript();
  const loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  if (!isServableDefinition(loaded.default)) {
    const found = loaded.default === undefined ? 'no default export' : `a default export of type ${typeof loaded.default}`;
    throw new FunctionModuleError(
      `${path}: want a default export made with defineFunction({ name, reconcile }) or defineAdmission({ name, type, admit }) (from 'kubeloop'); found ${found}`,
    );
  }
  try {
    // The same checks as defineFunction/defineAdmission, for modules that export a plain object.
    return isAdmissionDefinition(loaded.default) ? defineAdmission(loaded.default) : defineFunction(loaded.default);
  } catch (error) {
    throw new FunctionModuleError(`${path}: ${(error as Error).message}`);
  }
}

/** A built-in name or a module path; an unknown name says which names exist. */
export async function loadFunctionByNameOrPath(nameOrPath: string, cwd = process.cwd()): Promise<ServableDefinition> {
  const builtIn = !looksLikeModulePath(nameOrPath) && (nameOrPath in functionRegistry || nameOrPath in admissionRegistry);
  if (builtIn) return loadAnyFunction(nameOrPath);
  if (!looksLikeModulePath(nameOrPath) && !existsSync(resolve(cwd, nameOrPath))) {
    const known = [...Object.keys(functionRegistry), ...Object.keys(admissionRegistry)].sort().join(', ');
    throw new FunctionModuleError(`unknown function "${nameOrPath}": give a built-in name (${known}) or a module path such as ./src/index.ts`);
  }
  return loadFunctionModule(nameOrPath, cwd);
}
