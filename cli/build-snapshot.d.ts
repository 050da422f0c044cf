// Types of cli/build-snapshot.js (plain JavaScript: the router image runs it with nothing compiled).
export declare function snapshotBuildArgs(script: string, blob: string): string[];
