#!/usr/bin/env node
// Makes sure nginx is installed for the proxy tests (test/replicas/proxy.test.ts),
// which put a real L7 gRPC proxy in front of the replicas. The tests start
// their own nginx processes (in the foreground, on free ports, with their
// configuration, logs and temporary files in a temporary directory) and never
// touch an nginx already running. Debian's nginx-light has the HTTP/2 and gRPC
// modules. (Elsewhere than Debian: `dnf install nginx`, `brew install nginx`.)
import { existsSync } from 'node:fs';
import { has, requireDebianPackages } from './debian-packages.mjs';

export function ensureNginx() {
  requireDebianPackages(
    [['nginx-light', () => existsSync('/usr/sbin/nginx') || has('nginx')]],
    'The proxy tests run nginx in front of the server replicas',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) ensureNginx();
