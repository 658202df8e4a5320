import { randomUUID } from 'node:crypto';
import { shareServer } from '../support/shared-server';
import { ojs, ojsJson } from './ojs-command';

/**
 * `ojs queues limit` and the limits `ojs queues` shows, with the real `ojs`
 * binary (dist/ must be fresh: `npm run build`, which `npm test` runs first)
 * against a real server. Each test works on a queue of its own.
 */
describe('the ojs command and queue limits', () => {
  const shared = shareServer();
  const address = (): string => shared.server.address;
  const newQueue = (): string => `cli-${randomUUID().slice(0, 8)}`;

  it('sets a rate and a max active, which queues list and stats show, and clears them', async () => {
    const queue = newQueue();
    await ojs(address(), ['enqueue', 'a.b', '-q', queue]);
    const set = await ojs(address(), ['queues', 'limit', queue, '--rate', '20/500ms', '--max-active', '5']);
    expect([set.code, set.stderr]).toEqual([0, '']);
    expect(set.stdout).toMatch(/ LIMITS$/m);
    expect(set.stdout).toMatch(new RegExp(`^${queue} +running +1 .* 20/500ms, 5 active$`, 'm'));
    const stats = await shared.clients.operator.getQueueStats({ queue });
    expect(stats.queue?.limits).toEqual({ maxActive: 5, rate: { limit: 20, period: { seconds: 0, nanos: 500_000_000 } } });

    expect((await ojs(address(), ['queues', 'list'])).stdout).toMatch(new RegExp(`^${queue} .* 20/500ms, 5 active$`, 'm'));
    const listed = (await ojsJson(address(), ['queues', 'list'])).find((q) => q['name'] === queue);
    expect(listed).toMatchObject({ limits: { max_active: 5, rate: { limit: 20, period_ms: 500 } } });
    expect((await ojs(address(), ['queues', 'stats', queue])).stdout).toMatch(new RegExp(`^${queue} .* 20/500ms, 5 active$`, 'm'));

    // Setting replaces: a rate alone drops the max active.
    await ojs(address(), ['queues', 'limit', queue, '--rate', '1000/1h']);
    expect((await shared.clients.operator.getQueueStats({ queue })).queue?.limits).toEqual({
      rate: { limit: 1000, period: { seconds: 3_600, nanos: 0 } },
    });
    const [cleared] = await ojsJson(address(), ['queues', 'limit', queue, '--clear']);
    expect(cleared).toMatchObject({ name: queue, available: 1 });
    expect(cleared).not.toHaveProperty('limits');
    expect((await ojs(address(), ['queues', 'list'])).stdout).toMatch(new RegExp(`^${queue} .* -$`, 'm'));
  });

  it('refuses a malformed or contradictory command line as a usage error, and limits out of bounds as the server does', async () => {
    const queue = newQueue();
    for (const [args, message] of [
      [['--rate', '20'], '--rate: "20" is not <starts>/<period>'],
      [['--rate', '20/soon'], '--rate: "20/soon" is not <starts>/<period>'],
      [['--max-active', 'many'], '--max-active: "many" is not a whole number'],
      [['--clear', '--max-active', '1'], '--clear: give it alone'],
      [[], 'give --rate, --max-active or both, or --clear'],
    ] as const) {
      const run = await ojs(address(), ['queues', 'limit', queue, ...args]);
      expect([args, run.code, run.stderr]).toEqual([args, 2, expect.stringContaining(message)]);
    }
    const outOfBounds = await ojs(address(), ['queues', 'limit', queue, '--rate', '0/1s']);
    expect(outOfBounds.code).not.toBe(0);
    expect(outOfBounds.stderr).toContain('limits.rate.limit');
    expect((await shared.clients.operator.getQueueStats({ queue })).queue?.limits).toBeUndefined();
  });
});
