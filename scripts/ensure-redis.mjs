#!/usr/bin/env node
// Makes sure redis-server and redis-cli are installed for the Redis tests.
// When they are missing it installs Debian's redis-server package if it can
// (root with apt-get); otherwise it stops and says how to get them. The tests
// start their own redis-server processes on free ports and never touch a
// Redis already running on the machine.
import { execFileSync } from 'node:child_process';

const has = (command) => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

export function ensureRedis() {
  if (has('redis-server') && has('redis-cli')) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && has('apt-get')) {
    console.log('redis-server is missing: installing Debian\'s redis-server package');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'redis-server'], { stdio: 'inherit', env });
    if (has('redis-server') && has('redis-cli')) return;
  }
  console.error(
    [
      'The Redis tests need redis-server and redis-cli (Redis 7), and they are not installed.',
      'Install them, then run `npm test` again:',
      '  Debian/Ubuntu:  sudo apt-get install -y redis-server',
      '  Fedora:         sudo dnf install -y redis',
      '  macOS:          brew install redis',
    ].join('\n'),
  );
  process.exit(1);
}

if (import.meta.url === `file://${process.argv[1]}`) ensureRedis();
