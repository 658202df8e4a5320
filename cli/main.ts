#!/usr/bin/env node
// The `ojs` command (package.json "bin"): see program.ts and README.md, "Command line".
import { run } from './program';

async function main(): Promise<void> {
  // Set rather than exit: stdout may still be flushing into a pipe.
  process.exitCode = await run(process.argv);
}

void main();
