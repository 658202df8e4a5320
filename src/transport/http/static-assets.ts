import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
};

export interface StaticAsset {
  contentType: string;
  body: Buffer;
}

/**
 * The dashboard's browser bundle (built by `npm run build:web` into
 * dist/web), read once at start-up: a few hundred kilobytes, served from
 * memory, and a request can only name a file that was there (no path from a
 * URL ever reaches the file system).
 */
export function loadStaticAssets(dir: string): ReadonlyMap<string, StaticAsset> {
  if (!existsSync(join(dir, 'index.html'))) {
    throw new Error(`the dashboard is not built (no ${join(dir, 'index.html')}): run \`npm run build:web\``);
  }
  const assets = new Map<string, StaticAsset>();
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType !== undefined) assets.set(`/${name}`, { contentType, body: readFileSync(join(dir, name)) });
  }
  return assets;
}
