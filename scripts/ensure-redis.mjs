#!/usr/bin/env node
// Makes sure redis-server and redis-cli (Redis 7) are installed for the Redis
// tests, installing Debian's redis-server package when it can. The tests
// start their own redis-server processes on free ports and never touch a
// Redis already running on the machine. (Elsewhere than Debian: `dnf install
// redis`, `brew install redis`.)
import { has, requireDebianPackages } from './debian-packages.mjs';

export function ensureRedis() {
  requireDebianPackages(
    [['redis-server', () => has('redis-server') && has('redis-cli')]],
    'The Redis tests need redis-server and redis-cli',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) ensureRedis();
