import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { uuidv7 } from 'uuidv7';
import { JobState } from '../../gen/ojs/server/v1/job';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { ANONYMOUS } from '../../src/domain/principal';
import type { WorkflowDefinition } from '../../src/domain/workflow-definition';
import type { WorkflowView } from '../../src/domain/workflow-view';
import type { ApiErrorBody, ApiJob, ApiJobDetail, ApiPage, ApiSession, ApiWorkflow } from '../../src/transport/http/api-types';
import { screenshot, shareDashboard } from '../support/dashboard-browser';
import { getJob } from '../support/jobs';
import type { StreamReader } from '../support/streams';
import { TestServer } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

jest.setTimeout(60_000);

const PHONE = { width: 390, height: 844 };
const MAX_TABS = 60;
const OVERFLOW = '({ scrollWidth: document.scrollingElement.scrollWidth, innerWidth: window.innerWidth })';

/** A chain of one job then a group of two: the first step runs alone, the group's two jobs after it. */
function chainThenGroup(queue: string, name: string): WorkflowDefinition {
  return {
    kind: 'chain',
    name,
    steps: [
      { kind: 'job', job: { type: 'wf.extract', queue, args: ['source'] } },
      {
        kind: 'group',
        jobs: [
          { kind: 'job', job: { type: 'wf.resize', queue, args: ['small'] } },
          { kind: 'job', job: { type: 'wf.resize', queue, args: ['large'] } },
        ],
      },
    ],
  };
}

/** Waits until the element `selector` names shows `text` (the page updates itself; nothing reloads it). */
async function shows(page: Page, selector: string, text: string | RegExp): Promise<void> {
  await page.locator(selector).filter({ hasText: text }).first().waitFor({ timeout: 15_000 });
}

/** The next job a Fetch stream delivers (a response may carry none). */
async function nextDelivery(fetch: StreamReader<FetchResponse>): Promise<Delivery> {
  for (;;) {
    const [delivery] = (await fetch.next()).deliveries;
    if (delivery !== undefined) return delivery;
  }
}

/** Moves the focus with Tab until it is on `control`, which must show that it has it. */
async function tabTo(page: Page, control: Locator): Promise<void> {
  for (let tabs = 0; (await control.and(page.locator(':focus-visible')).count()) === 0; tabs += 1) {
    if (tabs === MAX_TABS) throw new Error('Tab never reached the control');
    await page.keyboard.press('Tab');
  }
}

/** An API answer: its HTTP status and JSON body. */
interface Answer<T> {
  status: number;
  body: T;
}

/** An API call from the test process, as the browser makes it. */
async function api<T>(base: string, method: 'GET' | 'POST', path: string, token?: string): Promise<Answer<T>> {
  const headers: Record<string, string> = method === 'POST' ? { 'content-type': 'application/json' } : {};
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  const response = await fetch(`${base}api/${path}`, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) });
  // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- the dashboard answers the shapes of api-types.ts
  return { status: response.status, body: (await response.json()) as T };
}

/** The step of `view` at `key`, which must exist. */
function stepAt(view: WorkflowView | ApiWorkflow, key: string) {
  const step = view.steps.find((s) => s.key === key);
  if (step === undefined) throw new Error(`no step ${key} in ${view.steps.map((s) => s.key).join(', ')}`);
  return step;
}

describe('the web dashboard workflow page', () => {
  const shared = shareDashboard();

  it('shows every step as it runs, links steps and jobs both ways, and cancels the rest after the confirmation', async () => {
    const created = await shared.server.server.app.workflows.create(ANONYMOUS, chainThenGroup('web-wf', 'thumbnails'));
    const keys = created.steps.map((step) => step.key);
    expect(keys).toHaveLength(3);
    const [first, small, large] = keys.map((key) => stepAt(created, key));
    const page = await shared.browser.open(`${shared.url}#/workflows/${created.id}`);
    const row = (key: string): string => `tr[data-step="${key}"]`;
    await shows(page, '[data-testid="workflow-state"]', 'pending');
    await shows(page, `${row(first!.key)} td[data-field="state"]`, 'pending');
    await shows(page, `${row(small!.key)} td[data-field="state"]`, 'waiting');
    await shows(page, '[data-testid="workflow-counts"]', '3 in all, 0 completed, 0 failed');

    // One job at a time: when the group's jobs become available, the worker takes one and the other waits.
    const worker = await TestWorker.register(shared.clients, { queues: ['web-wf'], concurrency: 1 });
    const fetch = worker.openFetch();
    try {
      const extract = await nextDelivery(fetch);
      expect(extract.job?.id).toBe(first!.jobId);
      // The page follows the workflow's jobs' events as they come.
      await shows(page, `${row(first!.key)} td[data-field="state"]`, 'active');
      await shows(page, '[data-testid="workflow-state"]', 'running');
      await worker.ack(extract, { pages: 12 });
      await shows(page, `${row(first!.key)} td[data-field="state"]`, 'completed');
      await shows(page, `${row(first!.key)} td[data-field="result"]`, '{"pages":12}');
      await shows(page, '[data-testid="workflow-counts"]', '3 in all, 1 completed, 0 failed');
      // One of the group's jobs is held by the worker when the workflow is cancelled, the other waits for a worker.
      const held = await nextDelivery(fetch);
      const [heldStep, waitingStep] = held.job?.id === small!.jobId ? [small!, large!] : [large!, small!];
      expect(held.job?.id).toBe(heldStep.jobId);
      await shows(page, `${row(heldStep.key)} td[data-field="state"]`, 'active');
      await shows(page, `${row(waitingStep.key)} td[data-field="state"]`, 'pending');
      await screenshot(page, 'workflow');

      // Each step links to its job's page, which links back and shows what the step was given.
      await page.locator(`${row(small!.key)} a[href="#/jobs/${small!.jobId!}"]`).click();
      await page.locator('[data-testid="parent-results"]').filter({ hasText: '"pages": 12' }).waitFor();
      await shows(page, 'dd', `step ${small!.key}`);
      await page.locator('[data-testid="job-workflow"]').click();
      await shows(page, '[data-testid="workflow-state"]', 'running');

      // From the keyboard: the confirmation is accepted (DashboardBrowser accepts every dialog).
      const cancel = page.getByRole('button', { name: 'Cancel workflow' });
      await tabTo(page, cancel);
      await page.keyboard.press('Enter');
      await shows(page, '[data-testid="workflow-state"]', 'cancelled');
      for (const key of [small!.key, large!.key]) await shows(page, `${row(key)} td[data-field="state"]`, /cancelled.*workflow cancelled/);
      await shows(page, `${row(first!.key)} td[data-field="state"]`, 'completed');
      // The button went with the workflow's end; the outcome holds the focus.
      await page.getByRole('status').filter({ hasText: 'Workflow cancelled.' }).and(page.locator(':focus')).waitFor();
      expect(await cancel.count()).toBe(0);
      await screenshot(page, 'workflow-cancelled');

      // The job listing, filtered by the workflow, lists its jobs and nothing else.
      await page.getByRole('link', { name: 'Its jobs in the job listing' }).click();
      for (const step of [first!, small!, large!]) await page.locator(`tr[data-job="${step.jobId!}"]`).waitFor();
      expect(await page.locator('tr[data-job]').count()).toBe(3);
    } finally {
      fetch.close();
      await shared.clients.workers.deregister({ workerId: worker.workerId });
    }
    const after = await shared.server.server.app.workflows.get(ANONYMOUS, created.id);
    expect(after.state).toBe('cancelled');
    expect((await getJob(shared.clients, small!.jobId!)).state).toBe(JobState.JOB_STATE_CANCELLED);
    expect((await getJob(shared.clients, large!.jobId!)).state).toBe(JobState.JOB_STATE_CANCELLED);
    await page.close();
  });

  it('fits a phone screen: the steps table scrolls in its own box and the page does not scroll sideways', async () => {
    const created = await shared.server.server.app.workflows.create(
      ANONYMOUS,
      chainThenGroup('web-wf-phone-with-a-rather-long-queue-name', 'a workflow with a rather long name for a phone'),
    );
    const page = await shared.browser.open(shared.url);
    try {
      await page.setViewportSize(PHONE);
      await page.goto(`${shared.url}#/workflows/${created.id}`);
      await page.locator(`tr[data-step="${created.steps[2]!.key}"]`).waitFor();
      expect(await page.evaluate<{ scrollWidth: number; innerWidth: number }>(OVERFLOW)).toEqual({
        scrollWidth: PHONE.width,
        innerWidth: PHONE.width,
      });
      const cancel = page.getByRole('button', { name: 'Cancel workflow' });
      const box = (await cancel.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
      await screenshot(page, 'phone-workflow');
    } finally {
      await page.close();
    }
  });

  it('answers the workflow API: a workflow, its jobs in the listing, and clear refusals', async () => {
    const created = await shared.server.server.app.workflows.create(ANONYMOUS, chainThenGroup('web-wf-api', ''));
    const got = await api<ApiWorkflow>(shared.url, 'GET', `workflows/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: created.id, type: 'chain', name: '', state: 'pending', jobCount: 3 });
    expect(got.body.steps.map((step) => [step.role, step.type, step.state])).toEqual([
      ['step', 'wf.extract', 'pending'],
      ['job', 'wf.resize', 'waiting'],
      ['job', 'wf.resize', 'waiting'],
    ]);

    const listed = await api<ApiPage<ApiJob>>(shared.url, 'GET', `jobs?workflow=${created.id}&order=oldest`);
    expect(listed.body.items.map((job) => job.id)).toEqual(created.steps.map((step) => step.jobId));
    const detail = await api<ApiJobDetail>(shared.url, 'GET', `jobs/${created.steps[1]!.jobId!}`);
    expect(detail.body.workflow).toEqual({ id: created.id, step: created.steps[1]!.key });

    const unknown = await api<ApiErrorBody>(shared.url, 'GET', `workflows/${uuidv7()}`);
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    const malformed = await api<ApiErrorBody>(shared.url, 'GET', 'workflows/not-a-workflow-id');
    expect(malformed).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    const badFilter = await api<ApiErrorBody>(shared.url, 'GET', 'jobs?workflow=not-a-workflow-id');
    expect(badFilter).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });

    const cancelled = await api<ApiWorkflow>(shared.url, 'POST', `workflows/${created.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.state).toBe('cancelled');
    expect(cancelled.body.steps.map((step) => step.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    const again = await api<ApiErrorBody>(shared.url, 'POST', `workflows/${created.id}/cancel`);
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'invalid_state' } } });
  });

  it('sends an excerpt of a long result, whole characters only', async () => {
    const created = await shared.server.server.app.workflows.create(ANONYMOUS, {
      kind: 'group',
      jobs: [{ kind: 'job', job: { type: 'wf.long', queue: 'web-wf-long', args: [] } }],
    });
    const worker = await TestWorker.register(shared.clients, { queues: ['web-wf-long'] });
    const fetch = worker.openFetch();
    try {
      // 199 characters of JSON text, then emoji (two UTF-16 units each): the cut at 200 would split the first.
      await worker.ack(await nextDelivery(fetch), { text: `${'a'.repeat(190)}${'😀'.repeat(20)}` });
    } finally {
      fetch.close();
      await shared.clients.workers.deregister({ workerId: worker.workerId });
    }
    const { body } = await api<ApiWorkflow>(shared.url, 'GET', `workflows/${created.id}`);
    expect(body.state).toBe('completed');
    expect(body.steps[0]!.resultExcerpt).toBe(`{"text":"${'a'.repeat(190)}…`);
  });
});

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

describe('the web dashboard workflow page with an auth file', () => {
  let dir: string;
  let server: TestServer;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-dashboard-workflows-'));
    const authFile = join(dir, 'principals.json');
    const principals = [
      { name: 'auditor', roles: ['reader'], token_sha256: sha256('reader-token') },
      { name: 'ops', roles: ['operator'], token_sha256: sha256('operator-token') },
    ];
    writeFileSync(authFile, JSON.stringify({ principals }));
    server = await TestServer.start({ dashboardPort: 0, security: { authFile, reloadIntervalMs: 60_000 } });
    url = `http://127.0.0.1:${server.server.dashboard!.port}/`;
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets a reader see a workflow but not cancel it, as GetWorkflow and CancelWorkflow rule', async () => {
    const created = await server.server.app.workflows.create(ANONYMOUS, chainThenGroup('web-wf-auth', 'audited'));
    const session = await api<ApiSession>(url, 'GET', 'session', 'reader-token');
    expect(session.body.may.cancelWorkflows).toBe(false);
    expect((await api<ApiWorkflow>(url, 'GET', `workflows/${created.id}`, 'reader-token')).status).toBe(200);
    const refused = await api<ApiErrorBody>(url, 'POST', `workflows/${created.id}/cancel`, 'reader-token');
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'permission_denied' } } });
    expect(refused.body.error.message).toContain('CancelWorkflow');

    expect((await api<ApiSession>(url, 'GET', 'session', 'operator-token')).body.may.cancelWorkflows).toBe(true);
    const cancelled = await api<ApiWorkflow>(url, 'POST', `workflows/${created.id}/cancel`, 'operator-token');
    expect(cancelled.body.state).toBe('cancelled');
  });
});
