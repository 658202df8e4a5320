import { randomUUID } from 'node:crypto';
import { HandlerCode } from '../../gen/ojs/server/v1/job';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';
import { ojs, ojsJson } from './ojs-command';

/**
 * The real `ojs` binary (dist/ must be fresh: `npm run build`, which `npm
 * test` runs first) against a real server: waiting for jobs, cancelling and
 * retrying them, terminating workers, and enqueueing for later. Each test
 * works on queues of its own.
 */
describe('the ojs command steering jobs and workers', () => {
  const shared = shareServer();
  const address = (): string => shared.server.address;
  const newQueue = (): string => `cli-${randomUUID().slice(0, 8)}`;

  async function enqueue(queue: string, ...flags: string[]): Promise<string> {
    const [job] = await ojsJson(address(), ['enqueue', 'steer.job', '[]', '-q', queue, ...flags]);
    return String(job!['id']);
  }

  /** Fetches the one job of `queue` on a worker of its own and settles it with `settle`. */
  async function runJob(queue: string, settle: (worker: TestWorker, delivery: Parameters<TestWorker['ack']>[0]) => Promise<unknown>) {
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = shared.closeAfterTest(worker.openFetch());
    const [delivery] = (await fetch.next()).deliveries;
    await settle(worker, delivery!);
    fetch.close();
  }

  it('jobs wait prints the finished job with its result and exits 0', async () => {
    const queue = newQueue();
    const id = await enqueue(queue);
    const waiting = ojs(address(), ['--json', 'jobs', 'wait', id, '--timeout', '10s']);
    await runJob(queue, (worker, delivery) => worker.ack(delivery, { sent: 3 }));
    const run = await waiting;
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout)).toMatchObject({ id, state: 'completed', result: { sent: 3 } });

    const human = await ojs(address(), ['jobs', 'wait', id]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^state +completed$/m);
    expect(human.stdout).toMatch(/^result +\{"sent":3\}$/m);
  });

  it('jobs wait exits 6 when the job was discarded, and 5 when its --timeout passes first', async () => {
    const queue = newQueue();
    const discarded = await enqueue(queue, '--max-attempts', '1');
    await runJob(queue, (worker, delivery) => worker.fail(delivery, { type: 'Boom', code: HandlerCode.HANDLER_CODE_RETRY }));
    const failed = await ojs(address(), ['jobs', 'wait', discarded]);
    expect(failed.code).toBe(6);
    expect(failed.stdout).toMatch(/^state +discarded$/m);
    expect(failed.stderr).toContain(`job ${discarded} finished discarded`);

    const idle = await enqueue(newQueue());
    const timedOut = await ojs(address(), ['--json', 'jobs', 'wait', idle, '--timeout', '300ms']);
    expect(timedOut.code).toBe(5);
    expect(JSON.parse(timedOut.stdout)).toMatchObject({ id: idle, state: 'available' });
    expect(timedOut.stderr).toContain(`job ${idle} is still available after 300ms`);
  });

  it('jobs cancel cancels an unfinished job, which jobs wait then reports with exit 6, and refuses a completed one', async () => {
    const queue = newQueue();
    const id = await enqueue(queue);
    const cancelled = await ojs(address(), ['jobs', 'cancel', id, '--reason', 'superseded']);
    expect(cancelled).toMatchObject({ code: 0, stdout: 'cancelled 1 of 1 matching job(s)\n' });
    const [job] = await ojsJson(address(), ['jobs', 'get', id]);
    expect(job).toMatchObject({ id, state: 'cancelled' });

    const waited = await ojs(address(), ['jobs', 'wait', id]);
    expect(waited.code).toBe(6);
    expect(waited.stderr).toContain(`job ${id} finished cancelled`);

    const doneQueue = newQueue();
    const done = await enqueue(doneQueue);
    await runJob(doneQueue, (worker, delivery) => worker.ack(delivery));
    const refused = await ojs(address(), ['jobs', 'cancel', done]);
    expect(refused.code).toBe(4);
    expect(refused.stdout).toMatch(new RegExp(`^${done}: \\S+ .*\ncancelled 0 of 1 matching job\\(s\\)\n$`));
  });

  it('jobs retry makes a discarded job available again with its attempts reset, and refuses an available one', async () => {
    const queue = newQueue();
    const id = await enqueue(queue, '--max-attempts', '1');
    await runJob(queue, (worker, delivery) => worker.fail(delivery, { type: 'Boom', code: HandlerCode.HANDLER_CODE_RETRY }));
    expect((await ojsJson(address(), ['jobs', 'get', id]))[0]).toMatchObject({ state: 'discarded', attempt: 1 });

    const retried = await ojs(address(), ['jobs', 'retry', id]);
    expect(retried).toMatchObject({ code: 0, stdout: 'retried 1 of 1 matching job(s)\n' });
    expect((await ojsJson(address(), ['jobs', 'get', id]))[0]).toMatchObject({ state: 'available', attempt: 0 });

    expect((await ojs(address(), ['jobs', 'retry', id])).code).toBe(4);
  });

  it('workers terminate tells the worker on its Beat stream, by id', async () => {
    const worker = await TestWorker.register(shared.clients, { labels: [newQueue()] });
    const beat = shared.closeAfterTest(worker.openBeat());
    expect((await beat.beat()).state).toBe(WorkerState.WORKER_STATE_RUNNING);

    const run = await ojs(address(), ['workers', 'terminate', worker.workerId]);
    expect(run).toMatchObject({ code: 0, stdout: `terminate: 1 worker(s): ${worker.workerId}\n` });
    // Pushed on the open stream without a beat asking for it.
    await beat.responses.nextMatching((r) => r.inReplyTo === 0 && r.state === WorkerState.WORKER_STATE_TERMINATE);
  });

  it('enqueue --at schedules a job for a duration from now or an RFC 3339 time, and --pending stages it', async () => {
    const queue = newQueue();
    const before = Date.now();
    const [later] = await ojsJson(address(), ['enqueue', 'later.job', '-q', queue, '--at', '10m']);
    const after = Date.now();
    expect(later).toMatchObject({ state: 'scheduled' });
    const scheduledAt = Date.parse(String(later!['scheduled_at']));
    expect(scheduledAt).toBeGreaterThanOrEqual(before + 600_000 - 1_000);
    expect(scheduledAt).toBeLessThanOrEqual(after + 600_000 + 1_000);

    const at = '2099-01-02T03:04:05.000Z';
    const [exact] = await ojsJson(address(), ['enqueue', 'later.job', '-q', queue, '--at', at]);
    expect(exact).toMatchObject({ state: 'scheduled', scheduled_at: at });

    const [staged] = await ojsJson(address(), ['enqueue', 'staged.job', '-q', queue, '--pending']);
    expect(staged).toMatchObject({ state: 'pending' });
    const listed = await ojsJson(address(), ['jobs', 'list', '--queue', queue, '--state', 'scheduled', 'pending', '--oldest-first']);
    expect(listed.map((job) => [job['id'], job['state']])).toEqual([
      [later!['id'], 'scheduled'],
      [exact!['id'], 'scheduled'],
      [staged!['id'], 'pending'],
    ]);
  });

  it('enqueue --unique-* carries a unique policy and tells a deduplicated or replacing enqueue on stderr', async () => {
    const queue = newQueue();
    const unique = ['--unique-keys', 'type,queue,args', '--unique-args-keys', 'account', '--unique-period', 'PT1H'];
    const enqueueReport = (args: string, ...flags: string[]) =>
      ojs(address(), ['enqueue', 'report.build', args, '-q', queue, ...unique, ...flags]);
    const first = await enqueueReport('[{"account": 42, "month": 1}]');
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const id = first.stdout.split(' ')[0]!;
    const job = (await shared.clients.jobs.getJob({ jobId: id })).job!;
    expect(job.unique).toMatchObject({ keys: ['type', 'queue', 'args'], argsKeys: ['account'], period: 'PT1H', onConflict: 'reject' });

    // The same account is a duplicate whatever the month: refused (exit 4, naming the job), ignored or replacing.
    const refused = await enqueueReport('[{"account": 42, "month": 2}]');
    expect(refused).toMatchObject({ code: 4, stdout: '' });
    expect(refused.stderr).toBe(`ojs: jobs[0].unique: job ${id} (available) already holds its uniqueness key (ALREADY_EXISTS)\n`);
    const ignored = await enqueueReport('[{"account": 42, "month": 2}]', '--unique-on-conflict', 'ignore');
    expect(ignored).toMatchObject({ code: 0, stdout: `${id}  report.build on ${queue}, available\n` });
    expect(ignored.stderr).toBe(`deduplicated: job ${id} already holds the uniqueness key\n`);
    const replacing = await enqueueReport('[{"account": 42, "month": 3}]', '--unique-on-conflict', 'replace');
    expect(replacing).toMatchObject({ code: 0, stderr: `replaced job ${id}, now cancelled\n` });
    expect(replacing.stdout.split(' ')[0]).not.toBe(id);

    // Another account is another key; a bad name is the server's refusal.
    expect(await enqueueReport('[{"account": 43}]')).toMatchObject({ code: 0, stderr: '' });
    const bad = await ojs(address(), ['enqueue', 'report.build', '-q', queue, '--unique-keys', 'colour']);
    expect(bad).toMatchObject({ code: 4 });
    expect(bad.stderr).toContain('"colour" is not one of type, queue, args, meta');
  });
});
