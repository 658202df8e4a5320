import { HealthCheckResponse_ServingStatus as Serving } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { seedFromEnv } from '../support/seeded-random';
import { TestServer, type Clients } from '../support/test-server';
import { Draw } from './draw';
import { fuzzedMethods } from './fuzzed-methods';
import { describeFinding, FuzzRun } from './fuzz-run';
import { FuzzWorld } from './fuzz-world';
import { hostileRequests } from './hostile-requests';
import { RawCaller } from './raw-caller';

/**
 * No request can crash, stall or corrupt the server (issue 8). One real
 * server on this project's store gets the hostile requests of the issue,
 * then random and mutated requests to every RPC of every service it serves
 * (the list comes from the service definitions), while workers fetch and
 * jobs move through their states. No call may answer INTERNAL or UNKNOWN
 * or go unanswered until its deadline; afterwards the server still says
 * SERVING, logged no error, and its store keeps every invariant.
 *
 * Bounded for CI: 3,000 requests or 60 s, whichever comes first.
 * OJS_FUZZ_RUNS=<n> sends n requests (no time bound); OJS_FUZZ_SEED=<seed>
 * replays a run's choices (ids drawn from live state may differ, so every
 * finding prints its request bytes).
 */
const SEED = seedFromEnv('OJS_FUZZ_SEED');
const RUNS = Number(process.env['OJS_FUZZ_RUNS'] ?? 3_000);
const TIME_BUDGET_MS = process.env['OJS_FUZZ_RUNS'] === undefined ? 60_000 : RUNS * 100;

describe('the server under random and hostile requests', () => {
  let server: TestServer;
  let clients: Clients;
  let caller: RawCaller;
  let world: FuzzWorld;

  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
    caller = new RawCaller(server.address);
    world = new FuzzWorld(server, clients, new Draw(SEED + 1));
    await world.refresh();
  });
  afterAll(async () => {
    world?.stop();
    caller?.close();
    await server?.stop();
  });

  it(
    `answers every RPC without INTERNAL, UNKNOWN or a hang, and keeps its store consistent (seed ${SEED})`,
    async () => {
      const run = new FuzzRun(caller, fuzzedMethods(), world, new Draw(SEED));
      const started = Date.now();
      await run.sendEach(hostileRequests(world));
      await run.fuzz(RUNS, started + TIME_BUDGET_MS);
      console.log(
        `rpc fuzz (${process.env['OJS_TEST_BACKEND'] ?? 'memory'}): seed ${SEED} (replay with OJS_FUZZ_SEED=${SEED}), ` +
          `${run.sent} requests in ${Date.now() - started} ms; statuses ${JSON.stringify(Object.fromEntries(run.statuses))}`,
      );

      expect(run.findings.map((finding) => describeFinding(finding, SEED))).toEqual([]);
      for (const service of ['', 'ojs.server.v1.WorkerService', 'ojs.server.v1.JobService', 'ojs.server.v1.OperatorService']) {
        expect((await clients.health.check({ service }, { signal: AbortSignal.timeout(3_000) })).status).toBe(Serving.SERVING);
      }
      expect(server.logger.entries.filter((entry) => entry.level === 'error')).toEqual([]);
      world.stop();
      await server.runMaintenance();
      expect(await server.audit()).toEqual([]);
    },
    TIME_BUDGET_MS + 60_000,
  );
});
