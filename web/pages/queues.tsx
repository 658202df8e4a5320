import { useState } from 'preact/hooks';
import type { ApiPage, ApiQueue, ApiSession } from '../../src/transport/http/api-types';
import { get, post } from '../api';
import { duration } from '../format';
import { useLive } from '../live';
import { COUNT_STATES } from './overview';
import { StatusMessage } from '../status-message';

/** A queue's fleet-wide limits, briefly: "20 per 500 ms, 5 active"; a dash for none. */
function limitsText(limits: ApiQueue['limits']): string {
  const parts: string[] = [];
  if (limits?.rate !== undefined) parts.push(`${limits.rate.limit} per ${limits.rate.periodMs} ms`);
  if (limits?.maxActive !== undefined) parts.push(`${limits.maxActive} active`);
  return parts.length === 0 ? '–' : parts.join(', ');
}

export function QueuesPage({ session }: { session: ApiSession }) {
  const live = useLive(() => get<ApiPage<ApiQueue>>('queues', { pageSize: '1000' }), { types: 'job.*,queue.*' }, []);
  const [message, setMessage] = useState('');
  if (live.data === undefined) return <p role="status">{live.error ?? 'Loading…'}</p>;
  const setPaused = async (queue: string, paused: boolean): Promise<void> => {
    try {
      await post(`queues/${encodeURIComponent(queue)}/${paused ? 'pause' : 'resume'}`);
      setMessage(`Queue ${queue} ${paused ? 'paused' : 'resumed'}.`);
    } catch (error) {
      setMessage(`Queue ${queue}: ${error instanceof Error ? error.message : String(error)}`);
    }
    live.reload();
  };
  return (
    <>
      <h1>Queues</h1>
      <StatusMessage text={message} />
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col">Status</th>
              <th scope="col" class="number">
                Waiting
              </th>
              <th scope="col" class="number">
                Active
              </th>
              <th scope="col" class="number">
                Lag
              </th>
              <th scope="col">Limits</th>
              {session.may.pauseQueues && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {live.data.items.map((queue) => (
              <tr data-queue={queue.name}>
                <th scope="row">
                  <a href={`#/jobs?queue=${encodeURIComponent(queue.name)}`}>{queue.name}</a>
                </th>
                <td>{queue.paused ? <span class="badge paused">paused</span> : <span class="badge running">running</span>}</td>
                <td class="number" title={COUNT_STATES.map((s) => `${s}: ${queue.counts[s]}`).join(', ')}>
                  {queue.counts.available + queue.counts.scheduled + queue.counts.retryable + queue.counts.pending}
                </td>
                <td class="number">{queue.counts.active}</td>
                <td class="number">{queue.lagMs === undefined ? '–' : duration(queue.lagMs)}</td>
                <td data-limits>{limitsText(queue.limits)}</td>
                {session.may.pauseQueues && (
                  <td class="actions">
                    {queue.paused ? (
                      <button type="button" aria-label={`Resume queue ${queue.name}`} onClick={() => void setPaused(queue.name, false)}>
                        Resume
                      </button>
                    ) : (
                      <button type="button" aria-label={`Pause queue ${queue.name}`} onClick={() => void setPaused(queue.name, true)}>
                        Pause
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
