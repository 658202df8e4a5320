import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/project-root';
import { installPackedSdk, type InstalledSdk } from '../support/installed-sdk';

const run = promisify(execFile);

/** The READMEs whose TypeScript blocks must compile, and the section of each that holds them (undefined: all). */
const READMES: { file: string; section: string | undefined }[] = [
  { file: 'README.md', section: '## The TypeScript SDK' },
  { file: 'README.md', section: '## Workflows' },
  { file: join('packages', 'sdk', 'README.md'), section: undefined },
];

/** The ```ts blocks of a Markdown text, their indentation (in a list item) removed. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!
      .split('\n')
      .map((line) => line.slice(indent!.length))
      .join('\n'),
  );
}

/** The text of a section: from its heading to the next heading of the same level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no section "${heading}"`);
  const level = heading.split(' ')[0]!;
  const end = markdown.indexOf(`\n${level} `, start + heading.length + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** Handlers whose types contradict their declaration: each line must be refused, or the test fails. */
const MISTYPED = `import { Worker } from 'ojs-sdk';

const worker = new Worker();
// @ts-expect-error the handler returns a string where its Result is a number
worker.handle<[text: string], number>('mistyped.result', async ([text]) => text);
// @ts-expect-error the first arg is a string, not a number
worker.handle<[text: string], number>('mistyped.args', async ([text]) => text * 2);
worker.handle<[count: number], number>('typed', async ([count], ctx) => count + ctx.args[0]);
`;

describe('the code snippets of the READMEs', () => {
  let installed: InstalledSdk;
  const snippets = READMES.flatMap(({ file, section: heading }) => {
    const text = readFileSync(join(projectRoot(), file), 'utf8');
    return tsBlocks(heading === undefined ? text : section(text, heading)).map((code, i) => ({ name: `${file} #${i + 1}`, code }));
  });

  beforeAll(async () => {
    installed = await installPackedSdk(['@types/node']);
  }, 120_000);
  afterAll(() => installed?.remove());

  it('are found: the SDK section and the package README each have some', () => {
    expect(snippets.filter((s) => s.name.startsWith('README.md')).length).toBeGreaterThanOrEqual(2);
    expect(snippets.filter((s) => s.name.startsWith('packages')).length).toBeGreaterThanOrEqual(3);
  });

  it('type-check against the types of the packed package, which refuse a handler that contradicts its declaration', async () => {
    const dir = join(installed.dir, 'snippets');
    mkdirSync(dir);
    // .mts: ES modules, where the snippets' top-level await is allowed.
    snippets.forEach(({ code }, i) => writeFileSync(join(dir, `snippet-${i + 1}.mts`), code));
    writeFileSync(join(dir, 'mistyped.mts'), MISTYPED);
    writeFileSync(
      join(installed.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          lib: ['es2023', 'dom'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          types: ['node'],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        include: ['snippets'],
      }),
    );
    const tsc = join(projectRoot(), 'node_modules', '.bin', 'tsc');
    const checked = await run(tsc, ['-p', installed.dir], { cwd: installed.dir }).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout || error.message,
    );
    const names = snippets.map((s, i) => `snippets/snippet-${i + 1}.mts: ${s.name}`).join('\n');
    expect(checked === '' ? '' : `${checked}\n(${names})`).toBe('');
  }, 60_000);
});
