#!/usr/bin/env node
// Builds the web dashboard (web/) into dist/web: one JavaScript bundle
// (Preact, uPlot and our code, minified), one stylesheet (ours and uPlot's)
// and index.html. The server serves these files itself (--dashboard-port),
// so the dashboard works without internet access. Run by `npm run build`,
// `npm run build:web` and the test command.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'dist', 'web');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
/**
 * The browser code may use, of ours, only web/ and the API's JSON shapes (the rule
 * .dependency-cruiser.cjs states for web/*.ts, which it cannot parse in .tsx files).
 */
const webSeesTheApiTypesOnly = {
  name: 'web-sees-the-api-types-only',
  setup(context) {
    const allowed = [join(root, 'web') + '/', join(root, 'src', 'transport', 'http', 'api-types')];
    context.onResolve({ filter: /^\./ }, ({ path, resolveDir, importer }) => {
      const target = resolve(resolveDir, path);
      if (allowed.some((prefix) => target.startsWith(prefix))) return undefined;
      return {
        errors: [
          {
            text: `${relative(root, importer)} imports ${relative(root, target)}: web/ may import only web/ and src/transport/http/api-types.ts`,
          },
        ],
      };
    });
  },
};

await build({
  plugins: [webSeesTheApiTypesOnly],
  entryPoints: [join(root, 'web', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: join(out, 'app.js'),
  logLevel: 'warning',
});
await build({
  entryPoints: [join(root, 'web', 'styles.css')],
  bundle: true,
  minify: true,
  outfile: join(out, 'app.css'),
  logLevel: 'warning',
});
copyFileSync(join(root, 'web', 'index.html'), join(out, 'index.html'));
