// What a Python and a Go project of `kubeloop init --language` share around the code: the Dockerfile and
// its ignores, the Loop and chart values (as for TypeScript), and a README with the project's commands.
import type { ProjectOptions } from '../project-options.ts';
import { admissionFixture } from './admission-code.ts';
import { admissionValuesYaml, hookYaml } from './admission-deploy.ts';
import { deploySection, loopYaml, scopeFiles } from './function-deploy.ts';
import type { ProjectFile } from './project-file.ts';

export interface LanguageProject {
  /** "Python" or "Go". */
  language: string;
  /** One sentence on where the function and the SDK are. */
  layout: string;
  /** The command that runs the tests, and the one that serves the function on :8080. */
  test: string;
  serve: string;
  dockerfile: string;
  dockerignore: string;
}

/**
 * How this project runs the kubeloop command: a Python or Go project has no node_modules, so `npx kubeloop`
 * asks the registry; a kubeloop installed from a tarball or folder is named by --package (its init's spec).
 */
export function npxKubeloop(options: ProjectOptions): string {
  return options.kubeloopSpec.startsWith('file:') ? `npx --yes --package=${options.kubeloopSpec.slice('file:'.length)} kubeloop` : 'npx kubeloop';
}

function readme(options: ProjectOptions, project: LanguageProject): string {
  const npx = npxKubeloop(options);
  return `# ${options.name}

A [kubeloop](https://github.com/kubeloop/kubeloop) reconcile function for \`${options.for.kind}\` (\`${options.for.apiVersion}\`) in ${project.language},
standard library only. ${project.layout} (vendored by \`kubeloop init\`; see kubeloop's docs/sdks.md).

| command | what it does |
| --- | --- |
| \`${project.test}\` | unit tests and every fixture in \`fixtures/\`, in-process |
| \`${project.serve} --port 8080\` | serves it on http://localhost:8080 (plain JSON and CloudEvents) |
| \`${npx} replay fixtures --to http://localhost:8080/\` | replays the fixtures over HTTP |
| \`${npx} conformance http://localhost:8080/ --fixtures fixtures\` | every transport, error and signing case a function must handle |
| \`${npx} dev --function-command "${project.serve}" --loop loop.yaml\` | a local cluster running the Loop as written, the function reloaded on save |

${deploySection(options, 'loop.yaml', '<path-to>/charts/kubeloop')}
`;
}

function admissionReadme(options: ProjectOptions, project: LanguageProject): string {
  const npx = npxKubeloop(options);
  return `# ${options.name}

A [kubeloop](https://github.com/kubeloop/kubeloop) ${options.admission ?? 'validating'} admission function for \`${options.for.kind}\` (\`${options.for.apiVersion}\`) in ${project.language},
standard library only. ${project.layout} (vendored by \`kubeloop init\`; see kubeloop's docs/sdks.md).

| command | what it does |
| --- | --- |
| \`${project.test}\` | unit tests and every fixture in \`fixtures/\`, in-process |
| \`${project.serve} --port 8080\` | serves it on http://localhost:8080 (\`POST /admit\`) |
| \`${npx} conformance http://localhost:8080/admit --fixtures fixtures\` | every transport, error and signing case a function must handle |
| \`${npx} dev --function-command "${project.serve}" --hook admission-hook.yaml\` | a local cluster running the hook as written, the function reloaded on save |

${deploySection(options, 'admission-hook.yaml', '<path-to>/charts/kubeloop')}
`;
}

/** An admission project's files around the code: its recorded request, Dockerfile, hook, function.yaml or values, README. */
export function languageAdmissionFiles(options: ProjectOptions, project: LanguageProject): ProjectFile[] {
  return [
    admissionFixture(options),
    { path: 'Dockerfile', content: project.dockerfile },
    { path: '.dockerignore', content: project.dockerignore },
    { path: 'admission-hook.yaml', content: hookYaml(options) },
    ...scopeFiles(options, admissionValuesYaml),
    { path: 'README.md', content: admissionReadme(options, project) },
  ];
}

export function languageProjectFiles(options: ProjectOptions, project: LanguageProject): ProjectFile[] {
  const localRun = `\`kubeloop dev --function-command "${project.serve}" --loop loop.yaml\`\n# runs it on a local cluster, reloaded on save`;
  return [
    { path: 'Dockerfile', content: project.dockerfile },
    { path: '.dockerignore', content: project.dockerignore },
    { path: 'loop.yaml', content: loopYaml(options, localRun) },
    ...scopeFiles(options),
    { path: 'README.md', content: readme(options, project) },
  ];
}
