// One file of a project `kubeloop init` writes, relative to the project folder.
export interface ProjectFile {
  path: string;
  content: string;
}
