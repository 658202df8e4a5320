import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root';
import { JsonLinesProcess } from '../../tools/json-lines-process';

/** The built `ojs` command, package.json "bin" (dist/ must be fresh: `npm run build`, which `npm test` runs first). */
export const OJS_BIN = join(projectRoot(), 'dist', 'cli', 'main.js');

/** What one run of `ojs` printed and exited with. */
export interface OjsRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a run: nothing of the caller's OJS_* settings, no
 * colour, the server's address; `env` adds or overrides.
 */
function ojsEnv(server: string, env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OJS_')));
  return { ...inherited, NO_COLOR: '1', OJS_SERVER: server, ...env };
}

/** Runs `ojs args...` against `server` to its end (killed by its PID after 15 s). */
export function ojs(server: string, args: string[], env: Record<string, string> = {}): Promise<OjsRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [OJS_BIN, ...args], { env: ojsEnv(server, env), timeout: 15_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `ojs args...` and parses its stdout as JSON lines, failing with its stderr when it did not exit 0. */
export async function ojsJson(server: string, args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  const run = await ojs(server, ['--json', ...args], env);
  if (run.code !== 0) throw new Error(`ojs ${args.join(' ')} exited with ${run.code}: ${run.stderr}`);
  return run.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** `ojs --json args...` left running (events tail --follow), its stdout read line by line. */
export function startOjs(server: string, args: string[]): JsonLinesProcess {
  return new JsonLinesProcess(`ojs ${args.join(' ')}`, process.execPath, [OJS_BIN, '--json', ...args], { env: ojsEnv(server, {}) });
}
