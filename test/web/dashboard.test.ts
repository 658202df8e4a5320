import type { Page } from 'playwright-core';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState, type Delivery, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { DashboardBrowser, screenshot } from '../support/dashboard-browser';
import { deadLetterJobs } from '../support/dead-letter';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import type { StreamReader } from '../support/streams';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import { WorkerProcess } from '../support/worker-process';

jest.setTimeout(60_000);

/** Waits until the element `selector` names shows exactly `text` (the page updates itself; nothing reloads it). */
async function shows(page: Page, selector: string, text: string | RegExp): Promise<void> {
  const wanted = typeof text === 'string' ? new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) : text;
  await page.locator(selector).filter({ hasText: wanted }).first().waitFor({ timeout: 15_000 });
}

/** The next job a Fetch stream delivers (a response may carry none). */
async function nextDelivery(fetch: StreamReader<FetchResponse>): Promise<Delivery> {
  for (;;) {
    const [delivery] = (await fetch.next()).deliveries;
    if (delivery !== undefined) return delivery;
  }
}

describe('the web dashboard', () => {
  let server: TestServer;
  let clients: Clients;
  let browser: DashboardBrowser;
  let url: string;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    server = await TestServer.start({ dashboardPort: 0, runMaintenance: true });
    clients = server.connect();
    browser = await DashboardBrowser.launch();
    url = `http://127.0.0.1:${server.server.dashboard!.port}/`;
  });
  afterAll(async () => {
    await worker?.stop('SIGTERM');
    await browser?.close();
    await server?.stop();
  });

  it('shows queue counts and worker totals that change as a real worker processes jobs', async () => {
    await enqueue(clients, ...[1, 2, 3].map((n) => ({ type: 'test.echo', queue: 'web-live', args: [n] })));
    const page = await browser.open(url);
    await shows(page, 'tr[data-queue="web-live"] td[data-state="available"]', '3');
    await shows(page, 'tr[data-queue="web-live"] td[data-state="completed"]', '0');

    worker = await WorkerProcess.start(server.address, { OJS_QUEUES: 'web-live' });
    await shows(page, 'tr[data-queue="web-live"] td[data-state="completed"]', '3');
    await shows(page, 'tr[data-queue="web-live"] td[data-state="available"]', '0');
    await shows(page, '[data-testid="workers-total"]', '1');
    await shows(page, '[data-testid="throughput-totals"]', /3 completed/);
    await screenshot(page, 'overview');

    await clients.operator.setQueueLimits({
      queue: 'web-live',
      limits: { maxActive: 5, rate: { limit: 20, period: { seconds: 0, nanos: 500_000_000 } } },
    });
    await page.getByRole('link', { name: 'Queues' }).click();
    await shows(page, 'tr[data-queue="web-live"] td', 'running');
    await shows(page, 'tr[data-queue="web-live"] td[data-limits]', '20 per 500 ms, 5 active');
    await page.getByRole('button', { name: 'Pause queue web-live' }).click();
    await shows(page, 'tr[data-queue="web-live"] td', 'paused');
    expect((await clients.operator.getQueueStats({ queue: 'web-live' })).queue?.paused).toBe(true);
    await screenshot(page, 'queues');
    await page.getByRole('button', { name: 'Resume queue web-live' }).click();
    await shows(page, 'tr[data-queue="web-live"] td', 'running');
    await page.close();
  });

  it('tells a worker to go quiet when Quiet is clicked, which the worker sees on its Beat stream', async () => {
    const testWorker = await TestWorker.register(clients, { queues: ['web-quiet'], labels: ['web-fleet'] });
    const beat = testWorker.openBeat();
    try {
      expect((await beat.beat()).state).toBe(WorkerState.WORKER_STATE_RUNNING);
      const page = await browser.open(`${url}#/workers`);
      const row = `tr[data-worker="${testWorker.workerId}"]`;
      await shows(page, `${row} td[data-field="state"]`, 'running');
      await screenshot(page, 'workers');

      await page.getByRole('button', { name: `Quiet worker ${testWorker.workerId}` }).click();
      // The server pushes the directive on the worker's open Beat stream: a worker told so stops fetching.
      await beat.responses.nextMatching((response) => response.state === WorkerState.WORKER_STATE_QUIET);
      await shows(page, `${row} td[data-field="desired-state"]`, 'quiet');
      // The worker reports reaching it; the page follows from the event stream.
      await beat.beat(WorkerState.WORKER_STATE_QUIET);
      await shows(page, `${row} td[data-field="state"]`, 'quiet');

      await page.getByLabel('Label', { exact: true }).selectOption('web-fleet');
      await page.getByRole('button', { name: 'Resume label' }).click();
      await beat.responses.nextMatching((response) => response.state === WorkerState.WORKER_STATE_RUNNING);
      await shows(page, `${row} td[data-field="desired-state"]`, 'running');
      await page.close();
    } finally {
      beat.close();
    }
  });

  it('retries selected dead-letter jobs, which leave the dead letter', async () => {
    const jobs = await deadLetterJobs(clients, 'web-dead', 2);
    const page = await browser.open(`${url}#/dead-letter`);
    for (const job of jobs) await page.locator(`tr[data-job="${job.id}"]`).waitFor();
    await page.getByLabel('Select every job on this page').check();
    await shows(page, '[data-testid="selected-count"]', /^\s*[2-9]\d* selected/);
    await screenshot(page, 'dead-letter');
    await page.getByRole('button', { name: 'Retry selected' }).click();
    for (const job of jobs) await page.locator(`tr[data-job="${job.id}"]`).waitFor({ state: 'detached' });
    for (const job of jobs) expect((await getJob(clients, job.id)).state).toBe(JobState.JOB_STATE_AVAILABLE);

    await page.goto(`${url}#/jobs/${jobs[0]!.id}`);
    await shows(page, 'h1 .badge', 'available');
    await screenshot(page, 'job');
    await page.close();
  });

  it('shows on first load the whole timeline of a job that failed once and then completed, both attempts', async () => {
    const job = await enqueueOne(clients, { type: 'test.flaky', queue: 'web-timeline' });
    const testWorker = await TestWorker.register(clients, { queues: ['web-timeline'] });
    const fetch = testWorker.openFetch();
    try {
      await testWorker.fail(await nextDelivery(fetch), { type: 'test.flaky', message: 'first try' });
      // Retrying a retryable job makes it available now, keeping its attempts and errors.
      const { result } = await clients.operator.retryJobs({ selection: { target: { $case: 'jobIds', value: { ids: [job.id] } } } });
      expect(result?.succeeded).toBe(1);
      await testWorker.ack(await nextDelivery(fetch));
    } finally {
      fetch.close();
    }
    await clients.workers.deregister({ workerId: testWorker.workerId });
    expect((await getJob(clients, job.id)).state).toBe(JobState.JOB_STATE_COMPLETED);

    // The page opens after everything happened: the timeline comes from the job itself, not from live events.
    const page = await browser.open(`${url}#/jobs/${job.id}`);
    await shows(page, '[data-testid="timeline"] li[data-kind="completed"]', /attempt 2 completed$/);
    const entries = page.locator('[data-testid="timeline"] li');
    expect(await Promise.all((await entries.all()).map((entry) => entry.getAttribute('data-kind')))).toEqual([
      'created',
      'failed',
      'enqueued',
      'started',
      'completed',
    ]);
    await shows(page, '[data-testid="timeline"] li[data-kind="failed"]', /attempt 1 failed: test\.flaky: first try$/);
    await shows(page, '[data-testid="timeline"] li[data-kind="started"]', /attempt 2 started$/);
    await screenshot(page, 'job-timeline');
    await page.close();
  });
});
