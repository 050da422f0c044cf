// The `kubeloop` executable's entry point (cli/bin.js loads it): runs the command line, sets the exit code.
import { runCli } from './run-cli.ts';

process.exitCode = await runCli(process.argv.slice(2));
