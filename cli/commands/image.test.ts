// `kubeloop image build`'s choice of what to build: a folder without a Dockerfile is refused in one line, and a
// project's one image is named after its package (the name its function.yaml runs). The build itself needs root
// and the registries: test/real-node/images.test.ts and tenant-on-real-node.test.ts.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { captureCommand } from '../../test/http/capture-console.ts';
import { contextName } from '../image/image-build.ts';
import { parseDockerfile, finalTargets } from '../image/dockerfile.ts';
import { run } from './image.ts';

const root = mkdtempSync(join(tmpdir(), 'kubeloop-image-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('kubeloop image build', () => {
  it('refuses a folder without a Dockerfile, naming it (exit 2)', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const { code, output } = await captureCommand(run, ['build', empty]);
    expect(code).toBe(2);
    expect(output).toBe(`kubeloop image: no Dockerfile in ${empty}`);
  });

  it("names a project's unnamed final stage after its package, else its folder", async () => {
    const project = join(root, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: '@team-a/My Controller', version: '0.2.0' }));
    expect(await contextName(project)).toBe('team-a-my-controller');
    expect(await contextName(join(root, 'empty'))).toBe('empty');
    // Docker's own name for an unnamed stage is its index: that is the target the image is named for.
    const stages = parseDockerfile('FROM node:24 AS build\nRUN true\nFROM gcr.io/distroless/nodejs24-debian12:nonroot\nCOPY --from=build /src ./\n');
    expect(finalTargets(stages)).toEqual(['1']);
  });
});
