#!/usr/bin/env node
// Makes sure Debian's chromium is installed for the dashboard tests (test/web/),
// which drive it headless with playwright-core: the browser comes from Debian,
// never from a download by Playwright. The tests start their own browser
// processes with fresh profiles and stop them. (Elsewhere than Debian:
// `dnf install chromium`, `brew install --cask chromium`, then point
// OJS_TEST_CHROMIUM at the binary.)
import { existsSync } from 'node:fs';
import { requireDebianPackages } from './debian-packages.mjs';

export function ensureChromium() {
  requireDebianPackages(
    [['chromium', () => existsSync(process.env.OJS_TEST_CHROMIUM || '/usr/bin/chromium')]],
    'The dashboard tests drive a headless chromium',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) ensureChromium();
