import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { WorkflowState } from '../../gen/ojs/server/v1/workflow_service';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';
import { ojs, ojsJson } from './ojs-command';

/**
 * `ojs workflows` and `ojs jobs list --workflow` with the real `ojs` binary
 * (dist/ must be fresh: `npm run build`, which `npm test` runs first)
 * against a real server; definitions are files in the contract's JSON form.
 */
describe('the ojs command and workflows', () => {
  const shared = shareServer();
  const address = (): string => shared.server.address;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-workflows-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A definition file holding `definition` as JSON text. */
  const file = (definition: unknown): string => {
    const path = join(dir, `${randomUUID()}.json`);
    writeFileSync(path, typeof definition === 'string' ? definition : JSON.stringify(definition));
    return path;
  };
  const etl = (queue: string) => ({
    chain: {
      name: 'etl',
      steps: [
        { job: { type: 'data.extract', queue, args: [{ source: 'api' }] } },
        { group: { jobs: [{ job: { type: 'transform.csv', queue } }, { job: { type: 'transform.json', queue } }] } },
        // snake_case and camelCase names both read, as proto3 JSON says.
        { job: { type: 'data.load', queue, retry: { max_attempts: 5, onExhaustion: 'ON_EXHAUSTION_DEAD_LETTER' } } },
      ],
    },
  });

  it('creates a workflow from a file, shows it with its steps as a table, and lists its jobs', async () => {
    const queue = `cli-wf-${randomUUID().slice(0, 8)}`;
    const [created] = await ojsJson(address(), ['workflows', 'create', '--file', file(etl(queue))]);
    expect(created).toMatchObject({ type: 'chain', name: 'etl', state: 'pending', job_count: 4 });
    const id = String(created!['id']);
    const steps = created!['steps'] as Record<string, unknown>[];
    expect(steps.map((step) => [step['key'], step['role'], step['state']])).toEqual([
      ['0', 'step', 'pending'],
      ['1.0', 'job', 'waiting'],
      ['1.1', 'job', 'waiting'],
      ['2', 'step', 'waiting'],
    ]);
    const load = (await shared.clients.jobs.getJob({ jobId: String(steps[3]!['job_id']) })).job!;
    expect(load.retry).toMatchObject({ maxAttempts: 5, onExhaustion: 2 });

    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    const fetch = shared.closeAfterTest(worker.openFetch());
    const [extract] = (await fetch.nextMatching((m) => m.deliveries.length > 0)).deliveries;
    await worker.ack(extract!, { rows: 3 });

    const shown = await ojs(address(), ['workflows', 'get', id]);
    expect(shown.code).toBe(0);
    // A time as the table shows it (cli/relative-time.ts): "now" within a second, "1s ago" once one has passed.
    const when = '(?:now|\\d+[smhd] ago)';
    for (const line of [
      `id +${id}`,
      'type +chain',
      'name +etl',
      'state +running',
      'jobs +4 \\(1 completed, 0 failed\\)',
      'STEP +ROLE +TYPE +STATE +JOB +ATTEMPTS +STARTED +FINISHED +RESULT',
      `0 +step +data.extract +completed +${extract!.job!.id} +1 +${when} +${when} +\\{"rows":3\\}`,
      // The worker's Fetch stream may have taken the group's jobs by now.
      `1.0 +job +transform.csv +(pending|active) +\\S+ +[01] +(?:${when}|-) +-`,
      '2 +step +data.load +waiting +\\S+ +0 +- +-',
    ])
      expect(shown.stdout).toMatch(new RegExp(`^${line}$`, 'm'));

    const listed = await ojsJson(address(), ['jobs', 'list', '--workflow', id]);
    expect(new Set(listed.map((job) => job['id']))).toEqual(new Set(steps.map((step) => step['job_id'])));
    expect(listed).toHaveLength(4);
    expect(listed.every((job) => job['workflow_id'] === id)).toBe(true);
  });

  it('cancels a workflow, and refuses to cancel it again (exit 4)', async () => {
    const queue = `cli-wf-${randomUUID().slice(0, 8)}`;
    const [created] = await ojsJson(address(), ['workflows', 'create', '-f', file(etl(queue))]);
    const id = String(created!['id']);
    const cancelled = await ojs(address(), ['workflows', 'cancel', id]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toMatch(/^state +cancelled$/m);
    expect(cancelled.stdout).toMatch(/^2 +step +data.load +cancelled \(workflow_cancelled\)/m);
    expect((await shared.clients.workflows.getWorkflow({ workflowId: id })).workflow!.state).toBe(WorkflowState.WORKFLOW_STATE_CANCELLED);
    const again = await ojs(address(), ['workflows', 'cancel', id]);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('FAILED_PRECONDITION');
  });

  it('says what is wrong: a missing workflow (exit 3), a bad id or definition (exit 4), a file that is not one (exit 2)', async () => {
    expect(await ojs(address(), ['workflows', 'get', uuidv7()])).toMatchObject({ code: 3 });
    expect(await ojs(address(), ['workflows', 'get', 'nope'])).toMatchObject({ code: 4 });
    const refused = await ojs(address(), ['workflows', 'create', '--file', file({ chain: { steps: [{ job: { type: 'Bad Type' } }] } })]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('steps[0].type');
    const unknownField = await ojs(address(), ['workflows', 'create', '--file', file({ chain: { stepz: [] } })]);
    expect(unknownField.code).toBe(2);
    expect(unknownField.stderr).toContain('stepz');
    expect(await ojs(address(), ['workflows', 'create', '--file', file('{ not json')])).toMatchObject({ code: 2 });
    expect(await ojs(address(), ['workflows', 'create', '--file', join(dir, 'missing.json')])).toMatchObject({ code: 2 });
  });
});
