import type { ApiPage, ApiQueue, ApiQueueStats, ApiWorker } from '../../src/transport/http/api-types';
import { get } from '../api';
import { duration } from '../format';
import { useLive } from '../live';
import { ThroughputChart, type Throughput } from '../throughput-chart';

/** Most queues whose throughput the chart adds up (one stats call each). */
const CHART_QUEUES = 50;
export const COUNT_STATES = ['available', 'active', 'scheduled', 'retryable', 'pending', 'completed', 'cancelled', 'discarded'] as const;

interface Overview {
  queues: ApiQueue[];
  workers: ApiWorker[];
  throughput: Throughput;
}

async function loadOverview(): Promise<Overview> {
  const [queues, workers] = await Promise.all([
    get<ApiPage<ApiQueue>>('queues', { pageSize: '1000' }),
    get<ApiPage<ApiWorker>>('workers', { pageSize: '1000' }),
  ]);
  const stats = await Promise.all(
    queues.items.slice(0, CHART_QUEUES).map((queue) => get<ApiQueueStats>(`queues/${encodeURIComponent(queue.name)}/stats`)),
  );
  const minutes = stats[0]?.minutes.map((m) => m.minute) ?? [];
  const sum = (key: 'completed' | 'failed' | 'discarded'): number[] =>
    minutes.map((_, i) => stats.reduce((total, s) => total + (s.minutes[i]?.[key] ?? 0), 0));
  return {
    queues: queues.items,
    workers: workers.items,
    throughput: { minutes, completed: sum('completed'), failed: sum('failed'), discarded: sum('discarded') },
  };
}

export function OverviewPage() {
  const live = useLive(loadOverview, { types: 'job.*,queue.*,worker.*' }, []);
  if (live.data === undefined) return <p role="status">{live.error ?? 'Loading…'}</p>;
  const { queues, workers, throughput } = live.data;
  const byState = (state: string): number => workers.filter((w) => w.state === state).length;
  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby="workers-heading" class="totals">
        <h2 id="workers-heading">Workers</h2>
        <dl>
          <div>
            <dt>Registered</dt>
            <dd data-testid="workers-total">{workers.length}</dd>
          </div>
          <div>
            <dt>Running</dt>
            <dd>{byState('running')}</dd>
          </div>
          <div>
            <dt>Quiet</dt>
            <dd>{byState('quiet')}</dd>
          </div>
          <div>
            <dt>Terminating</dt>
            <dd>{byState('terminate')}</dd>
          </div>
          <div>
            <dt>Active jobs</dt>
            <dd data-testid="workers-active-jobs">{workers.reduce((sum, w) => sum + w.activeJobIds.length, 0)}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby="queues-heading">
        <h2 id="queues-heading">Queues</h2>
        {queues.length === 0 ? (
          <p>No queue holds jobs yet.</p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  {COUNT_STATES.map((state) => (
                    <th scope="col" class="number">
                      {state}
                    </th>
                  ))}
                  <th scope="col" class="number">
                    lag
                  </th>
                </tr>
              </thead>
              <tbody>
                {queues.map((queue) => (
                  <tr data-queue={queue.name}>
                    <th scope="row">
                      {queue.name} {queue.paused && <span class="badge paused">paused</span>}
                    </th>
                    {COUNT_STATES.map((state) => (
                      <td class="number" data-state={state}>
                        {queue.counts[state]}
                      </td>
                    ))}
                    <td class="number">{queue.lagMs === undefined ? '–' : duration(queue.lagMs)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="throughput-heading">
        <h2 id="throughput-heading">Throughput, last hour (jobs a minute)</h2>
        <ThroughputChart throughput={throughput} />
      </section>
    </>
  );
}
