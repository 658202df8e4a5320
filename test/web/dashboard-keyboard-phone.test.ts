import type { Locator, Page } from 'playwright-core';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import { screenshot, shareDashboard } from '../support/dashboard-browser';
import { deadLetterJobs } from '../support/dead-letter';
import { enqueue, getJob } from '../support/jobs';
import { TestWorker } from '../support/test-worker';

jest.setTimeout(60_000);

/** More Tab presses than any page has stops before the control a test looks for: beyond, the control is not reachable. */
const MAX_TABS = 60;
const PHONE = { width: 390, height: 844 };

/**
 * In-page code, handed over as source text: the tests compile without the
 * DOM library (they run in Node), so what must run in the browser is not
 * type-checked against a DOM the test process does not have.
 */
const FOCUS_OUTLINE =
  '({ style: getComputedStyle(document.activeElement).outlineStyle, width: parseFloat(getComputedStyle(document.activeElement).outlineWidth) })';
const OVERFLOW = '({ scrollWidth: document.scrollingElement.scrollWidth, innerWidth: window.innerWidth })';

/**
 * Moves the focus with `key` (Tab or Shift+Tab) until it is on `control`,
 * then checks that the focus shows (:focus-visible, drawn as an outline):
 * the keyboard user must see where they are.
 */
async function tabTo(page: Page, control: Locator, key: 'Tab' | 'Shift+Tab' = 'Tab'): Promise<void> {
  const seen: string[] = [];
  while ((await control.and(page.locator(':focus-visible')).count()) === 0) {
    if (seen.length === MAX_TABS) throw new Error(`${key} never reached the control; the focus went through: ${seen.join(' | ')}`);
    await page.keyboard.press(key);
    const focused = page.locator(':focus');
    seen.push((await focused.count()) === 1 ? await focused.ariaSnapshot() : 'nothing');
  }
  const outline = await page.evaluate<{ style: string; width: number }>(FOCUS_OUTLINE);
  expect(outline.style).toBe('solid');
  expect(outline.width).toBeGreaterThan(0);
}

/** Waits until the keyboard focus is on `element` (an action that disables its button hands the focus to its outcome). */
async function focusReaches(page: Page, element: Locator): Promise<void> {
  await element.and(page.locator(':focus')).waitFor({ timeout: 15_000 });
}

/** Waits until the element `selector` names shows `text`. */
async function shows(page: Page, selector: string, text: string | RegExp): Promise<void> {
  await page.locator(selector).filter({ hasText: text }).first().waitFor({ timeout: 15_000 });
}

/** How wide the page is against the window: on a phone it must not scroll sideways (wide tables scroll inside their own box). */
function overflowOf(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate<{ scrollWidth: number; innerWidth: number }>(OVERFLOW);
}

describe('the web dashboard from the keyboard and on a phone', () => {
  const shared = shareDashboard();

  it('selects every dead-letter job and retries them, after the confirmation, with the keyboard alone', async () => {
    const ids = (await deadLetterJobs(shared.clients, 'web-keys', 2)).map((job) => job.id);
    const page = await shared.browser.open(`${shared.url}#/dead-letter`);
    for (const id of ids) await page.locator(`tr[data-job="${id}"]`).waitFor();

    await tabTo(page, page.getByLabel('Select every job on this page'));
    await page.keyboard.press('Space');
    await shows(page, '[data-testid="selected-count"]', /^\s*2 selected/);
    // The button was disabled until something was selected: it is before the table, so back up to it.
    await tabTo(page, page.getByRole('button', { name: 'Retry selected' }), 'Shift+Tab');
    await page.keyboard.press('Enter');
    for (const id of ids) await page.locator(`tr[data-job="${id}"]`).waitFor({ state: 'detached' });
    for (const id of ids) expect((await getJob(shared.clients, id)).state).toBe(JobState.JOB_STATE_AVAILABLE);
    await focusReaches(page, page.getByRole('status').filter({ hasText: 'Retry: 2 of 2 done.' }));
    await page.close();
  });

  it('tells a worker to go quiet with the keyboard alone, which the worker sees on its Beat stream', async () => {
    const testWorker = await TestWorker.register(shared.clients, { queues: ['web-keys-quiet'] });
    const beat = testWorker.openBeat();
    try {
      expect((await beat.beat()).state).toBe(WorkerState.WORKER_STATE_RUNNING);
      const page = await shared.browser.open(`${shared.url}#/workers`);
      await page.locator(`tr[data-worker="${testWorker.workerId}"]`).waitFor();
      await tabTo(page, page.getByRole('button', { name: `Quiet worker ${testWorker.workerId}` }));
      await page.keyboard.press('Enter');
      await beat.responses.nextMatching((response) => response.state === WorkerState.WORKER_STATE_QUIET);
      await shows(page, `tr[data-worker="${testWorker.workerId}"] td[data-field="desired-state"]`, 'quiet');
      // The Quiet button is disabled now: the focus is on what the click did, not lost to the top of the page.
      await focusReaches(page, page.getByRole('status').filter({ hasText: 'told to quiet' }));
      await page.close();
    } finally {
      beat.close();
      await shared.clients.workers.deregister({ workerId: testWorker.workerId });
    }
  });

  it('fits a phone screen: no page scrolls sideways, and the controls stay reachable', async () => {
    await enqueue(shared.clients, { type: 'test.phone', queue: 'web-phone-with-a-rather-long-queue-name' });
    const [job] = await enqueue(shared.clients, { type: 'test.phone.with.a.long.type.name', queue: 'web-phone' });
    const testWorker = await TestWorker.register(shared.clients, { queues: ['web-phone'], labels: ['phone-fleet', 'second-label'] });
    const page = await shared.browser.open(shared.url);
    try {
      await page.setViewportSize(PHONE);
      const pages = [
        { hash: '', name: 'overview', ready: 'tr[data-queue="web-phone"]' },
        { hash: 'queues', name: 'queues', ready: 'tr[data-queue="web-phone"]' },
        { hash: 'jobs', name: 'jobs', ready: `tr[data-job="${job!.id}"]` },
        { hash: `jobs/${job!.id}`, name: 'job', ready: '[data-testid="timeline"]' },
        { hash: 'workers', name: 'workers', ready: `tr[data-worker="${testWorker.workerId}"]` },
      ];
      for (const { hash, name, ready } of pages) {
        await page.goto(`${shared.url}#/${hash}`);
        await page.locator(ready).waitFor();
        expect({ name, ...(await overflowOf(page)) }).toEqual({ name, scrollWidth: PHONE.width, innerWidth: PHONE.width });
        for (const link of await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').all()) {
          const box = (await link.boundingBox())!;
          expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
        }
        await screenshot(page, `phone-${name}`);
      }

      // The worker's buttons are in the last column of a table wider than the phone: they scroll into view and work.
      const quiet = page.getByRole('button', { name: `Quiet worker ${testWorker.workerId}` });
      await quiet.scrollIntoViewIfNeeded();
      const box = (await quiet.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
      await quiet.click();
      await shows(page, `tr[data-worker="${testWorker.workerId}"] td[data-field="desired-state"]`, 'quiet');
      expect(await overflowOf(page)).toEqual({ scrollWidth: PHONE.width, innerWidth: PHONE.width });
    } finally {
      await page.close();
      await shared.clients.workers.deregister({ workerId: testWorker.workerId });
    }
  });
});
