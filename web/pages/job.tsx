import { useEffect, useState } from 'preact/hooks';
import type { ApiBulkResult, ApiEvent, ApiJobDetail, ApiSession, ApiTimelineEntry } from '../../src/transport/http/api-types';
import { followEvents, get, post } from '../api';
import { dateTime, json } from '../format';
import { useLive } from '../live';
import { StatusMessage } from '../status-message';

/**
 * One job: envelope (with its workflow, when it is a step of one), args,
 * meta, its workflow parent results, progress, checkpoint, error history with
 * backtraces, its timeline (the server derives it from the envelope, so it
 * tells the past too) and the raw events seen while the page is open. It
 * loads again on each of the job's events, which keeps the timeline current.
 */
export function JobPage({ id, session }: { id: string; session: ApiSession }) {
  const [events, setEvents] = useState<ApiEvent[]>([]);
  const [message, setMessage] = useState('');
  const live = useLive(() => get<ApiJobDetail>(`jobs/${encodeURIComponent(id)}`), undefined, [id]);
  useTimeline(id, setEvents, () => live.reload());
  if (live.data === undefined) return <p role="status">{live.error ?? 'Loading…'}</p>;
  const job = live.data;
  const act = async (operation: 'retry' | 'cancel'): Promise<void> => {
    try {
      const result = await post<ApiBulkResult>(`jobs/${operation}`, { ids: [id] });
      setMessage(result.items[0]?.ok === true ? `${operation} done.` : `${operation} refused: ${result.items[0]?.error?.message ?? ''}`);
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
    }
    live.reload();
  };
  return (
    <>
      <h1>
        Job <span class="id">{job.id}</span> <span class={`badge ${job.state}`}>{job.state}</span>
      </h1>
      <StatusMessage text={message} />
      <div class="toolbar">
        {session.may.retryJobs && (job.state === 'discarded' || job.state === 'retryable') && (
          <button type="button" onClick={() => void act('retry')}>
            Retry
          </button>
        )}
        {session.may.cancelJobs && !['completed', 'cancelled', 'discarded'].includes(job.state) && (
          <button type="button" class="danger" onClick={() => void act('cancel')}>
            Cancel
          </button>
        )}
      </div>
      <dl class="envelope">
        <dt>Type</dt>
        <dd>{job.type}</dd>
        <dt>Queue</dt>
        <dd>{job.queue}</dd>
        <dt>Priority</dt>
        <dd>{job.priority}</dd>
        <dt>Attempt</dt>
        <dd>
          {job.attempt} of {job.maxAttempts}
        </dd>
        <dt>Created</dt>
        <dd>{dateTime(job.createdAt)}</dd>
        {job.startedAt !== undefined && (
          <>
            <dt>Started</dt>
            <dd>{dateTime(job.startedAt)}</dd>
          </>
        )}
        {job.completedAt !== undefined && (
          <>
            <dt>Finished</dt>
            <dd>{dateTime(job.completedAt)}</dd>
          </>
        )}
        {job.workerId !== undefined && (
          <>
            <dt>Worker</dt>
            <dd>{job.workerId}</dd>
          </>
        )}
        {job.workflow !== undefined && (
          <>
            <dt>Workflow</dt>
            <dd>
              <a href={`#/workflows/${job.workflow.id}`} data-testid="job-workflow">
                {job.workflow.id}
              </a>{' '}
              step {job.workflow.step}
            </dd>
          </>
        )}
      </dl>
      {job.progress !== undefined && (
        <p>
          <label for="job-progress">Progress</label>{' '}
          <progress id="job-progress" max={1} value={job.progress}>
            {Math.round(job.progress * 100)}%
          </progress>{' '}
          {Math.round(job.progress * 100)}%
        </p>
      )}
      <h2>Args</h2>
      <pre>{json(job.args)}</pre>
      <h2>Meta</h2>
      <pre>{json(job.meta)}</pre>
      {job.parentResults !== undefined && (
        <>
          <h2>Parent results</h2>
          <pre data-testid="parent-results">{json(job.parentResults)}</pre>
        </>
      )}
      {job.lastCheckpoint !== undefined && (
        <>
          <h2>Checkpoint</h2>
          <pre>{json(job.lastCheckpoint)}</pre>
        </>
      )}
      {job.result !== undefined && (
        <>
          <h2>Result</h2>
          <pre>{json(job.result)}</pre>
        </>
      )}
      <h2>Errors</h2>
      {job.errors.length === 0 ? (
        <p>None.</p>
      ) : (
        <ol class="errors">
          {job.errors.map((error) => (
            <li>
              <details>
                <summary>
                  Attempt {error.attempt}: {error.type}: {error.message} ({dateTime(error.occurredAt)})
                </summary>
                <pre>{error.backtrace.join('\n') || 'no backtrace'}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
      <h2>Timeline</h2>
      <ol class="timeline" data-testid="timeline">
        {job.timeline.map((entry) => (
          <li data-kind={entry.kind}>
            <time dateTime={new Date(entry.at).toISOString()}>{dateTime(entry.at)}</time> {describe(entry)}
          </li>
        ))}
      </ol>
      <h2>Events since this page opened</h2>
      {events.length === 0 ? (
        <p>None yet.</p>
      ) : (
        <ol class="timeline" data-testid="live-events">
          {events.map((event) => (
            <li>
              <time dateTime={new Date(event.time).toISOString()}>{dateTime(event.time)}</time> {event.type}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

/** An entry of the timeline in words. */
function describe(entry: ApiTimelineEntry): string {
  const attempt = entry.attempt === undefined ? '' : `attempt ${entry.attempt} `;
  switch (entry.kind) {
    case 'created':
      return 'created';
    case 'scheduled':
      return `scheduled for ${dateTime(entry.dueAt)}`;
    case 'enqueued':
      return 'available to workers';
    case 'started':
      return `${attempt}started`;
    case 'failed':
      return `${attempt}failed: ${entry.errorType ?? ''}: ${entry.errorMessage ?? ''}`;
    case 'retry_due':
      return `${attempt}due`;
    case 'discarded':
      return `${attempt}discarded${entry.isDeadLetter === true ? ' to the dead letter' : ''}`;
    case 'completed':
    case 'cancelled':
      return `${attempt}${entry.kind}`;
  }
}

/** Collects the job's events as they come, and calls `onEvent` after each (the page loads the job again). */
function useTimeline(id: string, setEvents: (update: (events: ApiEvent[]) => ApiEvent[]) => void, onEvent: () => void): void {
  useEffect(() => {
    const abort = new AbortController();
    setEvents(() => []);
    void followEvents(
      { jobIds: id },
      (event) => {
        setEvents((events) => [...events, event]);
        onEvent();
      },
      abort.signal,
    );
    return () => abort.abort();
  }, [id]);
}
