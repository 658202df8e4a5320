import { assert, asyncProperty, integer, option, record } from 'fast-check';
import { Redis } from 'ioredis';
import { OjsError } from '../../src/domain/errors';
import { assembleParentResults, type StoredResult } from '../../src/domain/parent-results';
import { createWorkflow } from '../../src/domain/workflow-creation';
import type { WorkflowDefinition } from '../../src/domain/workflow-definition';
import type { WorkflowPlan } from '../../src/domain/workflow-plan';
import {
  cancelWorkflow,
  isNodeSettled,
  settleNode,
  startWorkflow,
  type NodeStatus,
  type WorkflowAdvance,
  type WorkflowRun,
} from '../../src/domain/workflow-run';
import { isTerminalWorkflowState } from '../../src/domain/workflow-state-machine';
import { RedisKeys } from '../../src/store/redis/keys';
import { readString } from '../../src/store/redis/reply';
import { scriptPrologue } from '../../src/store/redis/script-runner';
import { libraryPrelude } from '../../src/store/redis/scripts';
import { decodeWorkflow, encodeWorkflowPlan, encodeWorkflowRun } from '../../src/store/redis/workflow-codec';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { propertyParameters } from '../support/property';
import { WORKFLOW_NESTING, jobOutcomes, runChoices, workflowDefinitionOf } from '../support/workflow-arbitraries';
import { NOW, batch, chain, group, job, jobCreation } from '../unit/domain/workflow-fixtures';
import { startRedisWithClient, stopRedisWithClient } from '../support/redis-with-client';

/**
 * The Lua mirror of the workflow rules (lib/workflows.lua) agrees with the
 * domain (workflow-run.ts, parent-results.ts): random workflows are stored
 * with workflow-codec.ts in a real Redis, the same random settlements,
 * starts and cancellations are applied through both, and after every one
 * the advances, the stored run and the parent_results of every job made
 * available must be the same. Runs are seeded: OJS_PROPERTY_SEED=<seed>
 * replays the seed a failure reports.
 */

const RUNS = propertyParameters(100);
/**
 * Far more steps than a run takes (a generated workflow holds about a
 * hundred jobs at most, and most steps settle one): a run that has not
 * ended within them fails.
 */
const MAX_STEPS = 400;

/**
 * The lib's functions, called as a script calls them: EVALSHA of the
 * libraries every script starts with, the deployment's settings (its keys
 * among them: two arguments before the dispatcher's own), and this
 * dispatcher, which hands back what they return as a reply.
 */
const DISPATCH = `
local op, id = ARGV[3], ARGV[4]
local function reply(advance, problem, state)
  if not advance then return { problem or 'not_found', state or '' } end
  return { 'ok', advance.enqueue, advance.withdrawn, advance.changed, advance.transitions, advance.enqueueJobs, advance.withdrawnJobs }
end
if op == 'start' then return reply(workflowStart(id, tonumber(ARGV[5]))) end
if op == 'settle' then return reply(workflowSettle(id, tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]), ARGV[8] ~= '' and ARGV[8] or nil)) end
if op == 'cancel' then return reply(workflowCancel(id, tonumber(ARGV[5]))) end
if op == 'parents' then return workflowParentResults(id, tonumber(ARGV[5]), ARGV[6] ~= '' and tonumber(ARGV[6]) or nil) end
return redis.error_reply('unknown op ' .. tostring(op))`;

let redis: RedisServerProcess;
let client: Redis;
let sha: string;
beforeAll(async () => {
  ({ redis, client } = await startRedisWithClient());
  sha = readString(await client.call('script', 'load', `${libraryPrelude()}\n${DISPATCH}`), 'script sha');
});
afterAll(() => stopRedisWithClient({ redis, client }));

/** A reply of the dispatcher for an advance, or for a refusal. */
type LuaAdvance = ['ok', number[], number[], number[], [string, string, string][], string[], string[]] | [string, string];

/** The workflow functions of the Lua lib, on one deployment's keys. */
class LuaWorkflows {
  constructor(readonly keys: RedisKeys) {}

  start(id: string, now: number): Promise<unknown> {
    return this.call(['start', id, now]);
  }

  /** Settles a node; a result (JSON text) is copied to the run when the node succeeds by this, as the store's settlements do. */
  settle(id: string, node: number, outcome: string, now: number, result?: string): Promise<unknown> {
    return this.call(['settle', id, node, outcome, now, result ?? '']);
  }

  cancel(id: string, now: number): Promise<unknown> {
    return this.call(['cancel', id, now]);
  }

  async parentResults(id: string, node: number, maxInlineBytes: number | undefined): Promise<string> {
    return readString(await this.call(['parents', id, node, maxInlineBytes ?? '']), 'parent_results');
  }

  private call(args: (string | number)[]): Promise<unknown> {
    return client.call('evalsha', [sha, ...scriptPrologue(this.keys.scriptKeys(), { eventLogLength: 0 }), ...args]);
  }
}

/** What the dispatcher must answer for the domain's advance. */
function expectedReply(advance: WorkflowAdvance, jobIds: readonly string[]): LuaAdvance {
  return [
    'ok',
    advance.enqueue,
    advance.withdrawn,
    advance.changed,
    advance.transitions.map(({ from, to, at }): [string, string, string] => [from, to, String(at)]),
    advance.enqueue.map((node) => jobIds[node]!),
    advance.withdrawn.map((node) => jobIds[node]!),
  ];
}

/** A flat field, value list as a record. */
function hashOf(flat: readonly string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
}

/** A workflow stored in Redis and driven through both implementations, checking they agree after every change. */
class Differential {
  readonly plan: WorkflowPlan;
  readonly jobIds: string[];
  run: WorkflowRun;
  readonly results = new Map<number, StoredResult>();
  readonly lua = new LuaWorkflows(new RedisKeys(testPrefix()));

  constructor(
    definition: WorkflowDefinition,
    readonly maxInlineBytes?: number,
  ) {
    const { plan, jobs, run } = createWorkflow(definition, jobCreation());
    this.plan = plan;
    this.jobIds = jobs.map((created) => created.id);
    this.run = run;
  }

  get keys(): RedisKeys {
    return this.lua.keys;
  }

  async store(): Promise<void> {
    await client.call('hset', [this.keys.workflowPlan + this.plan.id, ...encodeWorkflowPlan(this.plan, this.jobIds)]);
    await client.call('hset', [this.keys.workflow + this.plan.id, ...encodeWorkflowRun(this.run)]);
  }

  jobNodes(statuses: readonly NodeStatus[]): number[] {
    return this.run.nodes.slice(0, this.plan.jobCount).flatMap((node, index) => (statuses.includes(node.status) ? [index] : []));
  }

  async start(): Promise<void> {
    await expectAgreement(this, startWorkflow(this.plan, this.run, NOW), await this.lua.start(this.plan.id, NOW));
  }

  /**
   * Settles a node; a success passes `result` as the store's settlements
   * pass the job's (none: no result), which the run keeps a copy of. A job
   * whose node has settled otherwise may still complete with a result
   * (retried by hand): its node gives parent_results none.
   */
  async settle(node: number, outcome: 'succeeded' | 'failed', result?: unknown): Promise<void> {
    const status = this.run.nodes[node]!.status;
    const json = outcome === 'succeeded' && result !== undefined ? JSON.stringify(result) : undefined;
    if (json !== undefined && !isNodeSettled(status)) this.results.set(node, { json, bytes: Buffer.byteLength(json) });
    const advance = settleNode(this.plan, this.run, node, outcome, NOW);
    await expectAgreement(this, advance, await this.lua.settle(this.plan.id, node, outcome, NOW, json));
  }

  async cancel(): Promise<void> {
    await expectAgreement(this, cancelWorkflow(this.plan, this.run, NOW), await this.lua.cancel(this.plan.id, NOW));
  }

  async stored(): Promise<{ plan: Record<string, string>; run: Record<string, string> }> {
    const [plan, run] = await Promise.all([
      client.hgetall(this.keys.workflowPlan + this.plan.id),
      client.hgetall(this.keys.workflow + this.plan.id),
    ]);
    return { plan, run };
  }
}

/**
 * Checks that Lua's reply and stored run are the domain's `advance`, and
 * that every job it enqueues gets the same parent_results from both; then
 * moves the workflow on.
 */
async function expectAgreement(wf: Differential, advance: WorkflowAdvance, reply: unknown): Promise<void> {
  expect(reply).toEqual(expectedReply(advance, wf.jobIds));
  wf.run = advance.run;
  const copies = [...wf.results].flatMap(([node, { json }]) => [`r${node}`, json]);
  expect((await wf.stored()).run).toEqual(hashOf([...encodeWorkflowRun(wf.run), ...copies]));
  for (const node of advance.enqueue) {
    const domain = assembleParentResults(wf.plan, node, (source) => wf.results.get(source), wf.maxInlineBytes);
    expect(await wf.lua.parentResults(wf.plan.id, node, wf.maxInlineBytes)).toBe(domain);
  }
}

/** A result of some bytes, some of them beyond ASCII, so that sizes count bytes rather than characters. */
function resultOf(path: string, choice: number): unknown {
  return choice % 2 === 0 ? { p: path } : { p: path, note: 'é✓'.repeat(choice % 7), n: choice };
}

describe('the Lua mirror of the workflow rules', () => {
  it('advances random workflows, settled in random orders, exactly as the domain does', async () => {
    const scenario = record({
      definition: workflowDefinitionOf(WORKFLOW_NESTING),
      succeeds: jobOutcomes,
      choices: runChoices,
      cancelAt: option(integer({ min: 0, max: 30 }), { nil: undefined }),
      maxInlineBytes: option(integer({ min: 0, max: 160 }), { nil: undefined }),
    });
    await assert(
      asyncProperty(scenario, async ({ definition, succeeds, choices, cancelAt, maxInlineBytes }) => {
        const wf = new Differential(definition, maxInlineBytes);
        await wf.store();
        for (let step = 0; step < MAX_STEPS && !isTerminalWorkflowState(wf.run.progress.state); step++) {
          // Offset by the step, so that a run whose choices repeat still reaches every kind of change.
          const choice = choices[step % choices.length]! + step;
          const waiting = wf.jobNodes(['waiting']);
          const settled = wf.jobNodes(['succeeded', 'failed', 'cancelled', 'skipped']);
          const live = wf.jobNodes(['enqueued']);
          if (step === cancelAt) {
            await wf.cancel();
          } else if (choice % 6 === 0 && waiting.length > 0) {
            // An operator cancels a job still waiting: its node fails.
            await wf.settle(waiting[choice % waiting.length]!, 'failed');
          } else if (choice % 6 === 1 && settled.length > 0) {
            // A job settles again after its node settled (retried by hand): nothing changes.
            await wf.settle(settled[choice % settled.length]!, choice % 4 === 1 ? 'succeeded' : 'failed', { late: choice });
          } else if (choice % 6 === 2) {
            await wf.start();
          } else {
            const node = live[choice % live.length]!;
            const path = wf.plan.nodes[node]!.path;
            await wf.settle(node, succeeds(path) ? 'succeeded' : 'failed', choice % 5 === 0 ? undefined : resultOf(path, choice));
          }
        }
        expect(isTerminalWorkflowState(wf.run.progress.state)).toBe(true);
        // An ended workflow cannot be cancelled; what is stored reads back as the domain's workflow.
        expect(() => cancelWorkflow(wf.plan, wf.run, NOW)).toThrow(OjsError);
        expect(await wf.lua.cancel(wf.plan.id, NOW)).toEqual(['invalid_state', wf.run.progress.state]);
        const stored = await wf.stored();
        expect(decodeWorkflow(wf.plan.id, stored.plan, stored.run)).toEqual({ plan: wf.plan, jobIds: wf.jobIds, run: wf.run });
      }),
      RUNS,
    );
  });

  const every = { onComplete: 'b.report', onSuccess: 'b.ok', onFailure: 'b.alert' };
  it.each([
    {
      name: 'cancels the callbacks of a batch whose chain step before it failed',
      definition: chain(job('a'), batch([job('b'), job('c')], every)),
      steps: [['0', 'failed']],
      statuses: { '1.0': 'cancelled', '1.on_complete': 'cancelled', '1.on_success': 'cancelled', '1.on_failure': 'cancelled' },
    },
    {
      name: 'cancels the callbacks of a batch whose group before it failed (a join gates it)',
      definition: chain(group(job('a'), job('b')), batch([job('c')], every)),
      steps: [
        ['0.1', 'failed'],
        ['0.0', 'succeeded'],
      ],
      statuses: { '1.0': 'cancelled', '1.on_complete': 'cancelled', '1.on_failure': 'cancelled' },
    },
    {
      name: 'fires on_complete and on_failure of a batch one of whose jobs failed, and skips on_success',
      definition: batch([job('a'), job('b')], every),
      steps: [
        ['0', 'failed'],
        ['1', 'succeeded'],
        ['on_complete', 'succeeded'],
        ['on_failure', 'failed'],
      ],
      statuses: { on_complete: 'succeeded', on_success: 'skipped', on_failure: 'failed' },
    },
    {
      name: 'tells the dependents of a job failed while it waited once its own dependency settles',
      definition: chain(job('a'), job('b'), job('c')),
      steps: [
        ['1', 'failed'],
        ['0', 'succeeded'],
      ],
      statuses: { '0': 'succeeded', '1': 'failed', '2': 'cancelled' },
    },
    {
      name: 'replaces the results that do not fit the inline bound by stand-ins, the nearest kept',
      definition: chain(job('a'), job('b'), job('c'), job('d')),
      maxInlineBytes: 40,
      steps: [
        ['0', 'succeeded'],
        ['1', 'succeeded'],
        ['2', 'succeeded'],
        ['3', 'succeeded'],
      ],
      statuses: { '3': 'succeeded' },
    },
    {
      name: 'cancels every unsettled node of a running workflow, enqueued ones included',
      definition: group(chain(job('a'), job('b')), job('c')),
      steps: [['0.0', 'succeeded'], 'cancel'],
      statuses: { '0.0': 'succeeded', '0.1': 'cancelled', '1': 'cancelled' },
    },
  ] satisfies {
    name: string;
    definition: WorkflowDefinition;
    maxInlineBytes?: number;
    steps: ([string, 'succeeded' | 'failed'] | 'cancel')[];
    statuses: Record<string, NodeStatus>;
  }[])('$name, as the domain does', async ({ definition, steps, statuses, maxInlineBytes }) => {
    const wf = new Differential(definition, maxInlineBytes);
    await wf.store();
    const index = (key: string): number => wf.plan.nodes.findIndex((node) => node.key === key && node.role !== 'join');
    for (const step of steps) {
      if (step === 'cancel') await wf.cancel();
      else await wf.settle(index(step[0]), step[1], { step: step[0], padding: 'x'.repeat(10) });
    }
    for (const [key, status] of Object.entries(statuses)) expect([key, wf.run.nodes[index(key)]?.status]).toEqual([key, status]);
  });

  it('refuses a success of a job never enqueued, or of a node that is no job, before writing anything', async () => {
    const wf = new Differential(chain(job('a.one'), job('a.two')));
    await wf.store();
    const before = await wf.stored();
    const lua = new LuaWorkflows(wf.keys);
    await expect(lua.settle(wf.plan.id, 1, 'succeeded', NOW)).rejects.toThrow(/^BADARG node 1 .* succeeded without being enqueued/);
    await expect(lua.settle(wf.plan.id, 2, 'failed', NOW)).rejects.toThrow(/^BADARG .* has no job node 2/);
    await expect(lua.settle(wf.plan.id, 0, 'done', NOW)).rejects.toThrow(/^BADARG done is no node outcome/);
    expect(await wf.stored()).toEqual(before);
  });

  it('refuses a plan missing a node it needs (CORRUPT) before writing anything', async () => {
    const wf = new Differential(batch([job('a.one'), job('a.two')], { onComplete: 'a.report' }));
    await wf.store();
    await client.hdel(wf.keys.workflowPlan + wf.plan.id, 'n2');
    const before = await wf.stored();
    const lua = new LuaWorkflows(wf.keys);
    await expect(lua.settle(wf.plan.id, 0, 'succeeded', NOW)).rejects.toThrow(/^CORRUPT workflow \S+ has no node 2/);
    await expect(lua.parentResults(wf.plan.id, 2, undefined)).rejects.toThrow(/^CORRUPT workflow \S+ has no node 2/);
    expect(await wf.stored()).toEqual(before);
  });

  it('answers not_found for a workflow it does not hold', async () => {
    const lua = new LuaWorkflows(new RedisKeys(testPrefix()));
    expect(await lua.start('wf-none', NOW)).toEqual(['not_found', '']);
    expect(await lua.settle('wf-none', 0, 'succeeded', NOW)).toEqual(['not_found', '']);
    expect(await lua.cancel('wf-none', NOW)).toEqual(['not_found', '']);
  });
});
