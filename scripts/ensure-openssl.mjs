#!/usr/bin/env node
// Makes sure the openssl command is installed for the TLS tests, which make
// their own CA and certificates in a temporary directory at the start of each
// test file. (Elsewhere than Debian: `dnf install openssl`, `brew install openssl`.)
import { has, requireDebianPackages } from './debian-packages.mjs';

export function ensureOpenssl() {
  requireDebianPackages([['openssl', () => has('openssl')]], 'The TLS tests need the openssl command');
}

if (import.meta.url === `file://${process.argv[1]}`) ensureOpenssl();
