import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root';
import { relativeTime } from '../../cli/relative-time';
import { OJS_BIN } from './ojs-command';

describe('the ojs command as shipped', () => {
  const read = (file: string): string => readFileSync(join(projectRoot(), file), 'utf8');

  it('is the package bin, a node script that npm and the image can run directly', () => {
    const { bin } = JSON.parse(read('package.json')) as { bin: Record<string, string> };
    expect(join(projectRoot(), bin['ojs']!)).toBe(OJS_BIN);
    expect(readFileSync(OJS_BIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toContain('chmod +x dist/cli/main.js');
    expect(dockerfile).toMatch(/^RUN ln -s \/app\/dist\/cli\/main\.js \/usr\/local\/bin\/ojs$/m);
  });

  it('writes times relative to now, as an operator reads them', () => {
    const now = Date.parse('2030-01-01T12:00:00Z');
    const at = (offsetMs: number): Date => new Date(now + offsetMs);
    expect(
      [at(-400), at(-59_000), at(-180_000), at(-7_200_000), at(-3 * 86_400_000), at(90_000), undefined].map((d) => relativeTime(d, now)),
    ).toEqual(['now', '59s ago', '3m ago', '2h ago', '3d ago', 'in 1m', '-']);
  });
});
