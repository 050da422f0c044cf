// The projects `kubeloop init` can write, one template per kind of project: a reconcile function, an
// admission function (`kubeloop init --admission validating|mutating`), or a reconcile function in Python or
// Go on that language's SDK (`kubeloop init --language python|go`).
import type { ProjectOptions } from '../project-options.ts';
import { admissionCodeFiles } from './admission-code.ts';
import { admissionDeployFiles } from './admission-deploy.ts';
import { clusterTestFiles } from './cluster-test.ts';
import { crdFiles } from './crd-files.ts';
import { functionCodeFiles } from './function-code.ts';
import { functionDeployFiles, type ToolVersions } from './function-deploy.ts';
import { goAdmissionFiles } from './go-admission.ts';
import { goProjectFiles } from './go-project.ts';
import { pythonAdmissionFiles } from './python-admission.ts';
import { pythonProjectFiles } from './python-project.ts';
import type { ProjectFile } from './project-file.ts';

export type { ProjectFile, ToolVersions };

export type ProjectTemplate = (options: ProjectOptions, tools: ToolVersions) => ProjectFile[];

export const PROJECT_TEMPLATES: Record<string, ProjectTemplate> = {
  function: (options, tools) => [...functionCodeFiles(options), ...clusterTestFiles(options), ...(options.crd ? crdFiles(options) : []), ...functionDeployFiles(options, tools)],
  admission: (options, tools) => [...admissionCodeFiles(options), ...admissionDeployFiles(options, tools)],
  python: (options) => (options.admission ? pythonAdmissionFiles(options) : pythonProjectFiles(options)),
  go: (options) => (options.admission ? goAdmissionFiles(options) : goProjectFiles(options)),
};
