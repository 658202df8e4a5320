#!/usr/bin/env node
// Makes sure valgrind (with callgrind_control) is installed for the benchmark's
// instruction counts (bench/instruction-counter.ts), which a test runs on a
// redis-server of its own. (Elsewhere than Debian: `dnf install valgrind`;
// `npm run bench` skips the counts without it.)
import { has, requireDebianPackages } from './debian-packages.mjs';

export function ensureValgrind() {
  requireDebianPackages(
    [['valgrind', () => has('valgrind') && has('callgrind_control')]],
    "The benchmark's instruction-count test needs valgrind and callgrind_control",
  );
}

if (import.meta.url === `file://${process.argv[1]}`) ensureValgrind();
