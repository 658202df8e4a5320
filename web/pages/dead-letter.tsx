import { useState } from 'preact/hooks';
import type { ApiBulkResult, ApiJob, ApiPage, ApiSession } from '../../src/transport/http/api-types';
import { get, post } from '../api';
import { useLive } from '../live';
import { JobsTable } from './jobs-table';
import { StatusMessage } from '../status-message';

/** The discarded jobs, newest first, a page at a time; many can be retried or deleted at once, after a confirmation. */
export function DeadLetterPage({ session }: { session: ApiSession }) {
  const [cursors, setCursors] = useState<string[]>(['']);
  const after = cursors[cursors.length - 1]!;
  const live = useLive(() => get<ApiPage<ApiJob>>('jobs', { states: 'discarded', pageSize: '50', after }), { types: 'job.*' }, [after]);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [message, setMessage] = useState('');
  if (live.data === undefined) return <p role="status">{live.error ?? 'Loading…'}</p>;
  const page = live.data;
  const select = (ids: string[], isSelected: boolean): void => {
    const next = new Set(selected);
    for (const id of ids)
      if (isSelected) next.add(id);
      else next.delete(id);
    setSelected(next);
  };
  const apply = async (operation: 'retry' | 'delete'): Promise<void> => {
    const ids = [...selected];
    const verb = operation === 'retry' ? 'Retry' : 'Delete';
    if (!confirm(`${verb} ${ids.length} job(s)?${operation === 'delete' ? ' Deleted jobs are gone for good.' : ''}`)) return;
    try {
      const result = await post<ApiBulkResult>(`jobs/${operation}`, { ids });
      const failures = result.items.filter((item) => !item.ok).map((item) => `${item.jobId}: ${item.error?.message ?? ''}`);
      setMessage(`${verb}: ${result.succeeded} of ${result.matched} done.${failures.length > 0 ? ` Refused: ${failures.join('; ')}` : ''}`);
    } catch (error) {
      setMessage(`${verb}: ${error instanceof Error ? error.message : String(error)}`);
    }
    setSelected(new Set());
    live.reload();
  };
  const canAct = session.may.retryJobs || session.may.deleteJobs;
  return (
    <>
      <h1>Dead letter</h1>
      <StatusMessage text={message} />
      {canAct && (
        <div class="toolbar" role="group" aria-label="Selected jobs">
          <span data-testid="selected-count">{selected.size} selected</span>
          {session.may.retryJobs && (
            <button type="button" disabled={selected.size === 0} onClick={() => void apply('retry')}>
              Retry selected
            </button>
          )}
          {session.may.deleteJobs && (
            <button type="button" class="danger" disabled={selected.size === 0} onClick={() => void apply('delete')}>
              Delete selected
            </button>
          )}
        </div>
      )}
      {page.items.length === 0 ? (
        <p>The dead letter is empty.</p>
      ) : (
        <JobsTable jobs={page.items} {...(canAct ? { selected, onSelect: select } : {})} />
      )}
      <Pager cursors={cursors} next={page.next} onChange={setCursors} />
    </>
  );
}

/** Previous / next buttons over a listing's page tokens (the stack of tokens that led to this page). */
export function Pager({ cursors, next, onChange }: { cursors: string[]; next: string | undefined; onChange: (cursors: string[]) => void }) {
  return (
    <nav class="pager" aria-label="Pages of the listing">
      <button type="button" disabled={cursors.length <= 1} onClick={() => onChange(cursors.slice(0, -1))}>
        Previous page
      </button>
      <span>Page {cursors.length}</span>
      <button type="button" disabled={next === undefined} onClick={() => next !== undefined && onChange([...cursors, next])}>
        Next page
      </button>
    </nav>
  );
}
