import { useState } from 'preact/hooks';
import type { ApiPage, ApiSession, ApiWorker, ApiWorkerState } from '../../src/transport/http/api-types';
import { get, post } from '../api';
import { duration } from '../format';
import { useLive, useNow } from '../live';
import { StatusMessage } from '../status-message';

const ACTIONS: { state: ApiWorkerState; label: string }[] = [
  { state: 'quiet', label: 'Quiet' },
  { state: 'running', label: 'Resume' },
  { state: 'terminate', label: 'Terminate' },
];

type Target = { workerId: string } | { label: string };

async function loadWorkers(): Promise<ApiPage<ApiWorker> & { loadedAt: number }> {
  return { ...(await get<ApiPage<ApiWorker>>('workers', { pageSize: '1000' })), loadedAt: Date.now() };
}

export function WorkersPage({ session }: { session: ApiSession }) {
  // Heartbeats too: the age of the last beat is what this page is about.
  const live = useLive(loadWorkers, { types: 'worker.*', heartbeats: 'true' }, []);
  const now = useNow();
  const [message, setMessage] = useState('');
  const [label, setLabel] = useState('');
  if (live.data === undefined) return <p role="status">{live.error ?? 'Loading…'}</p>;
  const { items: workers, now: serverNow, loadedAt } = live.data;
  // Ages on the server's clock, advanced by the time since the answer.
  const serverTime = serverNow + (now - loadedAt);
  const labels = [...new Set(workers.flatMap((w) => w.labels))].toSorted();
  const direct = async (target: Target, state: ApiWorkerState, what: string): Promise<void> => {
    if (state === 'terminate' && !confirm(`Terminate ${what}? Terminated workers finish their jobs and exit; they cannot be resumed.`))
      return;
    try {
      const result = await post<{ directed: number }>('workers/state', { ...target, state });
      setMessage(`${what}: ${result.directed} worker(s) told to ${state === 'running' ? 'run' : state}.`);
    } catch (error) {
      setMessage(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
    live.reload();
  };
  return (
    <>
      <h1>Workers</h1>
      <StatusMessage text={message} />
      {session.may.steerWorkers && labels.length > 0 && (
        <form class="toolbar" aria-label="Steer workers by label" onSubmit={(e) => e.preventDefault()}>
          <label for="label-select">Label</label>
          <select id="label-select" value={label} onChange={(e) => setLabel(e.currentTarget.value)}>
            <option value="">choose a label</option>
            {labels.map((l) => (
              <option value={l}>{l}</option>
            ))}
          </select>
          {ACTIONS.map(({ state, label: action }) => (
            <button type="button" disabled={label === ''} onClick={() => void direct({ label }, state, `label ${label}`)}>
              {action} label
            </button>
          ))}
        </form>
      )}
      {workers.length === 0 ? (
        <p>No worker is registered.</p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">State</th>
                <th scope="col">Desired</th>
                <th scope="col">Labels</th>
                <th scope="col">Host / pid</th>
                <th scope="col">Queues</th>
                <th scope="col" class="number">
                  Active jobs
                </th>
                <th scope="col" class="number">
                  Last beat
                </th>
                {session.may.steerWorkers && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {workers.map((worker) => (
                <tr data-worker={worker.workerId}>
                  <th scope="row" class="id">
                    {worker.workerId}
                  </th>
                  <td data-field="state">
                    <span class={`badge ${worker.state}`}>{worker.state}</span>
                  </td>
                  <td data-field="desired-state">{worker.desiredState}</td>
                  <td>{worker.labels.join(', ')}</td>
                  <td>
                    {worker.hostname} / {worker.pid}
                  </td>
                  <td>{worker.queues.join(', ')}</td>
                  <td class="number" data-field="active-jobs">
                    {worker.activeJobIds.length} / {worker.concurrency}
                  </td>
                  <td class="number" data-field="last-beat">
                    {duration(serverTime - worker.lastBeatAt)} ago
                  </td>
                  {session.may.steerWorkers && (
                    <td class="actions">
                      {ACTIONS.map(({ state, label: action }) => (
                        <button
                          type="button"
                          aria-label={`${action} worker ${worker.workerId}`}
                          disabled={worker.desiredState === state || worker.desiredState === 'terminate'}
                          onClick={() => void direct({ workerId: worker.workerId }, state, `worker ${worker.workerId}`)}
                        >
                          {action}
                        </button>
                      ))}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
