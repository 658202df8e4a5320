import { randomUUID } from 'node:crypto';
import { HandlerCode } from '../../gen/ojs/server/v1/job';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import { EventWatch } from '../support/event-watch';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';
import { ojs, ojsJson, startOjs } from './ojs-command';

/**
 * The real `ojs` binary (dist/cli/main.js; dist/ must be fresh: `npm run
 * build`, which `npm test` runs first) against a real server: what it
 * prints and what it exits with. Each test works on queues of its own.
 */
describe('the ojs command', () => {
  // A short keepalive, so that an EventWatch knows when it follows the log (event-watch.ts).
  const shared = shareServer({ protocol: { streamKeepaliveMs: 50 } });
  const address = (): string => shared.server.address;
  const newQueue = (): string => `cli-${randomUUID().slice(0, 8)}`;

  it('enqueues a job and shows it with jobs get, as a table of fields or as the JSON envelope', async () => {
    const queue = newQueue();
    const enqueued = await ojs(address(), ['enqueue', 'email.send', '["ada@example.com", 3]', '--queue', queue, '--priority', '5']);
    expect(enqueued).toMatchObject({ code: 0, stderr: '' });
    const id = enqueued.stdout.split(' ')[0]!;
    expect(enqueued.stdout).toBe(`${id}  email.send on ${queue}, available\n`);

    const shown = await ojs(address(), ['jobs', 'get', id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id +${id}$`, 'm'));
    expect(shown.stdout).toMatch(/^state +available$/m);
    expect(shown.stdout).toMatch(/^args +\["ada@example.com",3\]$/m);
    expect(shown.stdout).toMatch(/^created +\S+ \((now|\ds ago)\)$/m);

    const [job] = await ojsJson(address(), ['jobs', 'get', id]);
    expect(job).toMatchObject({ id, type: 'email.send', queue, priority: 5, state: 'available', args: ['ada@example.com', 3] });
    expect(job).toMatchObject({ retry: { on_exhaustion: 'discard', max_attempts: 3 } });
    expect(String(job!['created_at'])).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it('lists jobs as an aligned table, and with --json as one object per line, filtered and paged', async () => {
    const queue = newQueue();
    const ids: string[] = [];
    for (const type of ['report.a', 'report.b', 'report.a'])
      ids.push(String((await ojsJson(address(), ['enqueue', type, '-q', queue]))[0]!['id']));

    const table = await ojs(address(), ['jobs', 'list', '--queue', queue]);
    expect(table.code).toBe(0);
    const [head, ...rows] = table.stdout.trimEnd().split('\n');
    expect(head).toMatch(/^ID +TYPE +QUEUE +STATE +ATTEMPT +CREATED +LAST ERROR$/);
    expect(rows.map((row) => row.split(/ +/)[0])).toEqual(ids.toReversed());
    // Aligned: every row's TYPE column starts where the header's does.
    for (const row of rows) expect(row.indexOf('report.')).toBe(head!.indexOf('TYPE'));

    const listed = await ojsJson(address(), [
      'jobs',
      'list',
      '--queue',
      queue,
      '--type',
      'report.a',
      '--state',
      'available',
      '--oldest-first',
    ]);
    expect(listed.map((job) => [job['id'], job['state']])).toEqual([
      [ids[0], 'available'],
      [ids[2], 'available'],
    ]);
    const firstPage = await ojs(address(), ['--json', 'jobs', 'list', '--queue', queue, '--limit', '2']);
    expect(firstPage.stdout.trimEnd().split('\n')).toHaveLength(2);
    const token = /--page-token (\S+)/.exec(firstPage.stderr)?.[1];
    expect(token).toBeDefined();
    expect((await ojsJson(address(), ['jobs', 'list', '--queue', queue, '--page-token', token!])).map((job) => job['id'])).toEqual([
      ids[0],
    ]);
    expect(await ojsJson(address(), ['jobs', 'list', '--queue', queue, '--all', '--limit', '1'])).toHaveLength(3);
  });

  it('retries the dead letter by filter: a dry run counts and changes nothing, the real run makes the jobs available', async () => {
    const queue = newQueue();
    for (let i = 0; i < 2; i += 1)
      await ojs(address(), ['enqueue', 'flaky.job', '[]', '-q', queue, '--dead-letter', '--max-attempts', '1']);
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = shared.closeAfterTest(worker.openFetch());
    for (let failed = 0; failed < 2;) {
      for (const delivery of (await fetch.next()).deliveries) {
        await worker.fail(delivery, { type: 'SmtpError', code: HandlerCode.HANDLER_CODE_RETRY });
        failed += 1;
      }
    }
    fetch.close();
    const deadLetter = await ojsJson(address(), ['dead-letter', 'list', '--queue', queue]);
    expect(deadLetter.map((job) => [job['state'], job['dead_letter']])).toEqual([
      ['discarded', true],
      ['discarded', true],
    ]);

    const dryRun = await ojs(address(), ['dead-letter', 'retry', '--queue', queue, '--error-type', 'SmtpError', '--dry-run']);
    expect(dryRun).toMatchObject({ code: 0, stdout: 'dry run: 2 of 2 matching job(s) would be retried\n' });
    expect(await ojsJson(address(), ['dead-letter', 'list', '--queue', queue])).toHaveLength(2);

    const retried = await ojs(address(), ['dead-letter', 'retry', '--queue', queue, '--error-type', 'SmtpError']);
    expect(retried).toMatchObject({ code: 0, stdout: 'retried 2 of 2 matching job(s)\n' });
    expect(await ojsJson(address(), ['dead-letter', 'list', '--queue', queue])).toEqual([]);
    const available = await ojsJson(address(), ['jobs', 'list', '--queue', queue, '--state', 'available']);
    expect(available.map((job) => job['attempt'])).toEqual([0, 0]);
  });

  it('refuses to act on the whole dead letter without --all, as a usage error', async () => {
    const run = await ojs(address(), ['dead-letter', 'delete']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--all for every dead letter job');
  });

  it('pauses a queue, which queues list then shows with its paused badge, and resumes it', async () => {
    const queue = newQueue();
    await ojs(address(), ['enqueue', 'a.b', '-q', queue]);
    expect((await ojs(address(), ['queues', 'pause', queue])).code).toBe(0);
    const listed = await ojs(address(), ['queues', 'list']);
    expect(listed.stdout).toMatch(/^QUEUE +STATUS +AVAILABLE +ACTIVE/);
    expect(listed.stdout).toMatch(new RegExp(`^${queue} +paused +1 +0 `, 'm'));
    expect((await ojsJson(address(), ['queues', 'list'])).find((q) => q['name'] === queue)).toMatchObject({ paused: true, available: 1 });

    await ojs(address(), ['queues', 'resume', queue]);
    expect((await ojs(address(), ['queues', 'list'])).stdout).toMatch(new RegExp(`^${queue} +running +1 `, 'm'));
    expect((await ojs(address(), ['queues', 'stats', queue])).stdout).toContain('last hour: 0 completed, 0 failed attempts, 0 discarded');
  });

  it('quiets a registered worker by label, which hears it on its Beat stream, and resumes it by id', async () => {
    const label = newQueue();
    const worker = await TestWorker.register(shared.clients, { labels: [label] });
    const beat = shared.closeAfterTest(worker.openBeat());
    expect((await beat.beat()).state).toBe(WorkerState.WORKER_STATE_RUNNING);

    const quiet = await ojs(address(), ['workers', 'quiet', '--label', label]);
    expect(quiet).toMatchObject({ code: 0, stdout: `quiet: 1 worker(s): ${worker.workerId}\n` });
    // Pushed on the open stream without a beat asking (keepalives, also unasked, say running until then).
    await beat.responses.nextMatching((r) => r.inReplyTo === 0 && r.state === WorkerState.WORKER_STATE_QUIET);
    const [listed] = await ojsJson(address(), ['workers', 'list', '--label', label]);
    expect(listed).toMatchObject({ worker_id: worker.workerId, state: 'running', desired_state: 'quiet', labels: [label] });

    expect((await ojs(address(), ['workers', 'resume', worker.workerId])).code).toBe(0);
    await beat.responses.nextMatching((r) => r.inReplyTo === 0 && r.state === WorkerState.WORKER_STATE_RUNNING);
    expect((await ojsJson(address(), ['workers', 'list', '--label', label]))[0]).toMatchObject({ desired_state: 'running' });
    expect((await ojs(address(), ['workers', 'quiet', worker.workerId, '--queue', 'default'])).code).toBe(2);
  });

  it('tails events with --follow, says the last event id on stopping, and resumes after it with --after', async () => {
    const queue = newQueue();
    const watch = await EventWatch.open(shared.clients, { queues: [queue] }).opened();
    await ojs(address(), ['enqueue', 'first.job', '-q', queue]);
    const [first] = await watch.until(
      (events) => events.length === 1,
      () => 'the first job.enqueued',
    );
    watch.close();

    // A call timeout far shorter than the tail: the deadline is for single calls, never for a stream.
    const tail = startOjs(address(), ['--call-timeout', '100ms', 'events', 'tail', '--follow', '--queue', queue, '--after', first!.id]);
    try {
      await ojs(address(), ['enqueue', 'second.job', '-q', queue]);
      await ojs(address(), ['enqueue', 'third.job', '-q', queue]);
      const third = await tail.waitFor((line) => line['job_type'] === 'third.job', 'the third job.enqueued');
      expect(tail.lines.map((line) => [line['type'], line['job_type']])).toEqual([
        ['job.enqueued', 'second.job'],
        ['job.enqueued', 'third.job'],
      ]);
      expect(await tail.stop('SIGINT')).toBe(0);
      expect(tail.errorOutput).toContain(`last event id: ${String(third['id'])}`);

      await ojs(address(), ['enqueue', 'fourth.job', '-q', queue]);
      const resumed = await ojsJson(address(), ['events', 'tail', '--queue', queue, '--after', String(third['id']), '--limit', '1']);
      expect(resumed.map((event) => [event['type'], event['job_type']])).toEqual([['job.enqueued', 'fourth.job']]);
    } finally {
      await tail.kill();
    }
  });

  it('exits with the not-found code for an unknown job, the usage code for a bad command line, and 0 for --help at every level', async () => {
    const missing = await ojs(address(), ['jobs', 'get', '0190f5a2-0000-7000-8000-000000000000']);
    expect(missing).toMatchObject({ code: 3, stdout: '' });
    expect(missing.stderr).toContain('NOT_FOUND');
    expect((await ojs(address(), ['jobs', 'cancel', '0190f5a2-0000-7000-8000-000000000000'])).code).toBe(3);
    expect((await ojs(address(), ['enqueue', 'a.b', 'not json'])).code).toBe(2);
    expect((await ojs(address(), ['jobs', 'list', '--state', 'sleeping'])).code).toBe(2);
    expect((await ojs(address(), ['enqueue', 'Not A Type'])).code).toBe(4);
    for (const level of [[], ['jobs'], ['jobs', 'list'], ['dead-letter', 'retry'], ['queues'], ['workers', 'quiet'], ['events', 'tail']]) {
      const help = await ojs(address(), [...level, '--help']);
      expect([level, help.code, help.stdout]).toEqual([level, 0, expect.stringContaining('Usage: ojs')]);
    }
  });

  it('exits with the unavailable code when no server answers', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const run = await ojs('127.0.0.1:1', ['queues', 'list']);
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('UNAVAILABLE');
  });
});
