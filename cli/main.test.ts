// The `kubeloop` command line: --version, exit code 2 for every command's usage error and 1 for a runtime
// failure (in-process through runCli, and through the real executable), names in help, bash completion.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { functionRegistry } from '../functions/registry.ts';
import { SettingError } from '../lib/config/settings.ts';
import { isUsageError, UsageError } from './command-args.ts';
import { COMMANDS, commandWords } from './command-list.ts';
import { runCli } from './run-cli.ts';

const BIN = fileURLToPath(new URL('./bin.js', import.meta.url));
/** A kubeconfig whose API server refuses connections (port 1). */
const REFUSED_KUBECONFIG = join(mkdtempSync(join(tmpdir(), 'kubeloop-main-')), 'kubeconfig');
writeFileSync(
  REFUSED_KUBECONFIG,
  'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
);
afterAll(() => rmSync(dirname(REFUSED_KUBECONFIG), { recursive: true, force: true }));
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The real executable, as a user runs it. */
async function executable(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], { env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** One command line in-process, with what it prints. */
async function kubeloop(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void stdout.push(parts.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void stderr.push(parts.join(' ')));
  try {
    const code = await runCli(args);
    return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('the kubeloop executable', () => {
  it('prints its version with --version and -v, exit code 0', async () => {
    for (const flag of ['--version', '-v']) {
      const result = await executable(flag);
      expect(result.stdout.trim()).toBe(`kubeloop ${VERSION}`);
      expect(result.code).toBe(0);
    }
  });

  // The machine's own node when it is older than 24 (CI's and a newcomer's situation), else none to try.
  const olderNode = ['/usr/bin/node', '/usr/local/bin/node'].find((node) => {
    try {
      return Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' })) < 24;
    } catch {
      return false;
    }
  });
  it.runIf(olderNode)('says on an older Node that it needs Node 24 and how to get it, exit code 2, before loading anything', async () => {
    const result = await promisify(execFile)(olderNode ?? '', [BIN, 'replay', '--help']).catch((error: unknown) => error as { code: number; stdout: string; stderr: string });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect((result as { stderr: string }).stderr).toMatch(/^kubeloop needs Node\.js 24 or newer; this is Node\.js \d+\./);
    expect((result as { stderr: string }).stderr).toContain('npm install --prefix ~/.node24 node@24 && export PATH=~/.node24/node_modules/.bin:$PATH');
  });

  it('exits 2 on a usage error', async () => {
    const result = await executable('certs', 'generate');
    expect(result.stderr).toMatch(/--out DIR is required/);
    expect(result.code).toBe(2);
  });
});

describe('kubeloop --version', () => {
  it.each([['--version'], ['-v']])('%s prints the package version and exits 0', async (flag) => {
    const result = await kubeloop(flag);
    expect(result.stdout.trim()).toBe(`kubeloop ${VERSION}`);
    expect(result.code).toBe(0);
  });
});

describe('exit codes', () => {
  const usageErrors: Array<[string, string[]]> = [
    ['no command', []],
    ['an unknown command', ['frobnicate']],
    ['init without a folder', ['init']],
    ['function with an unknown name', ['function', 'no-such-function']],
    ['function with a bad port', ['function', 'podset', '--port', 'eighty']],
    ['replay without fixtures', ['replay', '--function', 'podset']],
    ['render without an object', ['render', '--function', 'podset']],
    ['conformance without a URL', ['conformance']],
    ['diff without --function', ['diff', '--cluster-loop', 'podset']],
    ['diff of a namespaced Loop without -n', ['diff', '--loop', 'podset', '--function', 'podset']],
    ['diff with both --loop and --hook', ['diff', '--loop', 'a', '--hook', 'b', '--function', 'podset']],
    ['history without the object', ['history', 'podset']],
    ['history with an object that is not NAMESPACE/NAME', ['history', 'podset', 'a/b/c']],
    ['history of a namespaced Loop without -n', ['history', '--loop', 'podset', 'web']],
    ['history with both --loop and --cluster-loop', ['history', '--loop', 'a', '--cluster-loop', 'b', '-n', 'x', 'web']],
    ['history with -n disagreeing with NAMESPACE/NAME', ['history', '--loop', 'podset', '-n', 'team-b', 'team-a/web']],
    ['history --file of a path that does not exist', ['history', '--file', '/nonexistent/history', '--cluster-loop', 'podset', 'web']],
    ['history --file with --as (files have no API server to impersonate at)', ['history', '--file', '/tmp', '--cluster-loop', 'podset', 'web', '--as', 'bob']],
    ['console with a bad port', ['console', '--port', 'eighty']],
    ['console with --router-metrics that is neither a URL nor a Service', ['console', '--router-metrics', 'nowhere']],
    ['router with an unknown flag', ['router', '--no-such-flag']],
    ['webhook with an unknown flag', ['webhook', '--no-such-flag']],
    ['certs with an unknown action', ['certs', 'renew']],
    ['certs generate without --out', ['certs', 'generate']],
    ['certs with an unknown flag', ['certs', 'show', '--no-such-flag']],
    ['cluster with an unknown action', ['cluster', 'explode']],
    ['cluster with an unknown flag', ['cluster', 'status', '--no-such-flag']],
    ['cluster up with zero nodes', ['cluster', 'up', '--nodes', '0']],
    ['dev with an unexpected argument', ['dev', 'now']],
    ['dev with an unknown flag', ['dev', '--no-such-flag']],
    ['completion for an unknown shell', ['completion', 'fish']],
    ['image with an unknown action', ['image', 'push']],
    // A file named on the command line that is not there is the caller's mistake too, whatever the command.
    ['replay of a fixture file that does not exist', ['replay', '/nonexistent/case.json', '--function', 'podset']],
    ['render of an object file that does not exist', ['render', '/nonexistent/pod.yaml', '--function', 'podset']],
    ['router with a kubeconfig that does not exist', ['router', '--kubeconfig', '/nonexistent/kubeconfig']],
    ['webhook with a kubeconfig that does not exist', ['webhook', '--kubeconfig', '/nonexistent/kubeconfig']],
    ['history with a kubeconfig that does not exist', ['history', 'podset', 'default/web', '--kubeconfig', '/nonexistent/kubeconfig']],
    ['history --loop -n with a kubeconfig that does not exist', ['history', '--loop', 'podset', '-n', 'team-a', 'web', '--kubeconfig', '/nonexistent/kubeconfig']],
    ['console with a kubeconfig that does not exist', ['console', '--port', '0', '--kubeconfig', '/nonexistent/kubeconfig']],
    ['certs with a kubeconfig that does not exist', ['certs', 'show', '--kubeconfig', '/nonexistent/kubeconfig']],
    ['router with a context the kubeconfig lacks', ['router', '--kubeconfig', REFUSED_KUBECONFIG, '--context', 'nowhere']],
  ];
  it.each(usageErrors)('exits 2 on a usage error: %s', async (_what, args) => {
    const result = await kubeloop(...args);
    expect(result.stderr).toMatch(/kubeloop|usage/);
    expect(result.code).toBe(2);
  });

  it('covers every command with a usage error', () => {
    const tried = new Set(usageErrors.map(([, args]) => args[0]));
    expect(Object.keys(COMMANDS).filter((command) => !tried.has(command))).toEqual([]);
  });

  it('exits 1 on a runtime failure: a function that does not answer', async () => {
    const result = await kubeloop('replay', '--to', 'http://127.0.0.1:9/reconcile', fileURLToPath(new URL('../test/fixtures/pod-name-label', import.meta.url)));
    expect(result.stdout).toMatch(/FAIL/);
    expect(result.code).toBe(1);
  });

  it('diff exits 2, not 1 (which means "changes"), when it cannot reach a cluster', async () => {
    const result = await kubeloop('diff', '--cluster-loop', 'podset', '--function', 'podset', '--kubeconfig', '/nonexistent/kubeconfig');
    expect(result.stderr).toMatch(/^kubeloop diff: kubeconfig: /m);
    expect(result.code).toBe(2);
  });

  it('exits 1 on a runtime failure: no cluster to talk to (the router, within --api-timeout-seconds)', async () => {
    const result = await kubeloop('router', '--kubeconfig', REFUSED_KUBECONFIG, '--api-timeout-seconds', '1', '--port', '0', '--host', '127.0.0.1', '--log-level', 'silent');
    expect(result.stderr).toMatch(/^kubeloop: the API server at https:\/\/127\.0\.0\.1:1 did not answer within 1 s \(last: connect ECONNREFUSED/m);
    expect(result.code).toBe(1);
  });

  it('tells usage errors from failures', () => {
    expect(isUsageError(new UsageError('--out is required'))).toBe(true);
    expect(isUsageError(Object.assign(new TypeError('Unknown option'), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }))).toBe(true);
    expect(isUsageError(new SettingError('kubeconfig: file "/x" does not exist'))).toBe(true);
    expect(isUsageError(new Error('connect ECONNREFUSED'))).toBe(false);
  });
});

describe('help lists valid names', () => {
  it.each([['function'], ['replay'], ['render']])('kubeloop %s --help names every built-in function', async (command) => {
    const result = await kubeloop(command, '--help');
    expect(result.code).toBe(0);
    for (const name of Object.keys(functionRegistry)) expect(result.stdout).toContain(name);
  });

  it.each([['cluster', 'kubeconfig'], ['certs', 'rotate'], ['completion', 'zsh']])('kubeloop %s --help names its actions', async (command, action) => {
    const result = await kubeloop(command, '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(action);
  });

  it('kubeloop certs and webhook default to the kubeloop-system namespace, like the chart and kubeloop dev', async () => {
    for (const command of ['certs', 'webhook', 'dev']) expect((await kubeloop(command, '--help')).stdout).toMatch(/--namespace (NS\s+.*)?kubeloop-system/);
  });
});

describe('kubeloop completion bash', () => {
  async function complete(words: string[]): Promise<string[]> {
    const script = (await kubeloop('completion', 'bash')).stdout;
    const line = words.map((w) => `'${w}'`).join(' ');
    const { stdout } = await promisify(execFile)('bash', ['-c', `${script}\nCOMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _kubeloop; printf '%s\\n' "\${COMPREPLY[@]}"`], { cwd: '/' });
    return stdout.split('\n').filter(Boolean);
  }

  it('completes commands, then built-in function names and actions', async () => {
    expect(await complete(['kubeloop', 'ren'])).toEqual(['render']);
    expect(await complete(['kubeloop', 'function', 'pod'])).toEqual(expect.arrayContaining(['pod-name-label', 'podset']));
    expect(await complete(['kubeloop', 'cluster', 'k'])).toEqual(['kubeconfig']);
    expect(commandWords('certs')).toEqual(['generate', 'inject', 'rotate', 'show']);
  });
});
