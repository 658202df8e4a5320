import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DashboardBrowser, screenshot } from '../support/dashboard-browser';
import { enqueue } from '../support/jobs';
import { TestServer } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

jest.setTimeout(60_000);

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const PRINCIPALS = [
  { name: 'auditor', roles: ['reader'], token: 'reader-token' },
  { name: 'ops', roles: ['operator'], token: 'operator-token' },
  { name: 'fleet', roles: ['worker'], token: 'worker-token' },
  { name: 'shop', roles: ['producer'], token: 'producer-token' },
];

describe('the web dashboard with an auth file', () => {
  let dir: string;
  let server: TestServer;
  let browser: DashboardBrowser;
  let url: string;
  let workerId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-dashboard-auth-'));
    const authFile = join(dir, 'principals.json');
    writeFileSync(authFile, JSON.stringify({ principals: PRINCIPALS.map(({ token, ...p }) => ({ ...p, token_sha256: sha256(token) })) }));
    server = await TestServer.start({ dashboardPort: 0, security: { authFile, reloadIntervalMs: 60_000 } });
    await enqueue(server.connect({ token: 'producer-token' }), { type: 'auth.job', queue: 'web-auth' });
    workerId = (await TestWorker.register(server.connect({ token: 'worker-token' }), { queues: ['web-auth'] })).workerId;
    browser = await DashboardBrowser.launch();
    url = `http://127.0.0.1:${server.server.dashboard!.port}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function signIn(token: string): Promise<Page> {
    const page = await browser.open(url);
    await page.getByLabel('Bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    return page;
  }

  it('asks for a token, and refuses one it does not know or whose roles may not read', async () => {
    const page = await signIn('wrong-token');
    await page.getByRole('alert').filter({ hasText: 'That token is not known.' }).waitFor();
    await screenshot(page, 'sign-in');
    await page.getByLabel('Bearer token').fill('worker-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'may not read the dashboard' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
    await page.close();
  });

  it('shows a reader the pages without a single control, and the API refuses its writes', async () => {
    const page = await signIn('reader-token');
    await page.getByText('Signed in as auditor').waitFor();
    await page.locator('tr[data-queue="web-auth"]').waitFor();
    await page.goto(`${url}#/workers`);
    await page.locator(`tr[data-worker="${workerId}"]`).waitFor();
    expect(await page.getByRole('button', { name: /Quiet|Resume|Terminate/ }).count()).toBe(0);
    await page.goto(`${url}#/queues`);
    await page.locator('tr[data-queue="web-auth"]').waitFor();
    expect(await page.getByRole('button', { name: /Pause|Resume/ }).count()).toBe(0);
    await page.goto(`${url}#/dead-letter`);
    await page.getByRole('heading', { name: 'Dead letter' }).waitFor();
    expect(await page.getByRole('button', { name: /Retry|Delete/ }).count()).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);

    const refusal = await page.evaluate(async (id) => {
      const response = await fetch('/api/workers/state', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer reader-token' },
        body: JSON.stringify({ workerId: id, state: 'quiet' }),
      });
      const body: unknown = await response.json();
      return { status: response.status, body };
    }, workerId);
    expect(refusal.status).toBe(403);
    expect(refusal.body).toMatchObject({ error: { code: 'permission_denied', retryable: false } });
    expect(JSON.stringify(refusal.body)).toContain('SetWorkerState');
    await page.close();
  });

  it('shows an operator the controls its roles allow', async () => {
    const page = await signIn('operator-token');
    await page.getByText('Signed in as ops').waitFor();
    await page.goto(`${url}#/workers`);
    await page.getByRole('button', { name: `Quiet worker ${workerId}` }).waitFor();
    await page.goto(`${url}#/queues`);
    await page.getByRole('button', { name: 'Pause queue web-auth' }).waitFor();
    expect(await page.getByRole('button', { name: 'Pause queue web-auth' }).isEnabled()).toBe(true);
    await page.close();
  });
});
