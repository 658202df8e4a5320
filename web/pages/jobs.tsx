import { useState } from 'preact/hooks';
import { API_JOB_STATES, type ApiJob, type ApiPage } from '../../src/transport/http/api-types';
import { get } from '../api';
import { useLive } from '../live';
import { Pager } from './dead-letter';
import { JobsTable } from './jobs-table';

interface Filter {
  states: string;
  queue: string;
  type: string;
  /** A workflow's id: only its jobs. */
  workflow: string;
}

/** Jobs by state, queue, type and workflow, newest first, a page at a time. */
export function JobsPage({ search }: { search: string }) {
  const initial = new URLSearchParams(search);
  const [filter, setFilter] = useState<Filter>({
    states: initial.get('state') ?? '',
    queue: initial.get('queue') ?? '',
    type: initial.get('type') ?? '',
    workflow: initial.get('workflow') ?? '',
  });
  const [draft, setDraft] = useState<Filter>(filter);
  const [cursors, setCursors] = useState<string[]>(['']);
  const after = cursors[cursors.length - 1]!;
  const live = useLive(
    () => get<ApiPage<ApiJob>>('jobs', { ...filter, pageSize: '50', after }),
    { types: 'job.*', ...(filter.queue === '' ? {} : { queues: filter.queue }) },
    [filter, after],
  );
  return (
    <>
      <h1>Jobs</h1>
      <form
        class="toolbar"
        aria-label="Filter jobs"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter(draft);
          setCursors(['']);
        }}
      >
        <label for="filter-state">State</label>
        <select id="filter-state" value={draft.states} onChange={(e) => setDraft({ ...draft, states: e.currentTarget.value })}>
          <option value="">any</option>
          {API_JOB_STATES.map((state) => (
            <option value={state}>{state}</option>
          ))}
        </select>
        <label for="filter-queue">Queue</label>
        <input id="filter-queue" value={draft.queue} onInput={(e) => setDraft({ ...draft, queue: e.currentTarget.value })} />
        <label for="filter-type">Type</label>
        <input id="filter-type" value={draft.type} onInput={(e) => setDraft({ ...draft, type: e.currentTarget.value })} />
        <label for="filter-workflow">Workflow</label>
        <input
          id="filter-workflow"
          class="id"
          placeholder="workflow id"
          value={draft.workflow}
          onInput={(e) => setDraft({ ...draft, workflow: e.currentTarget.value.trim() })}
        />
        <button type="submit">Filter</button>
      </form>
      {live.error !== undefined && (
        <p role="alert" class="problem">
          {live.error}
        </p>
      )}
      {live.data !== undefined && (live.data.items.length === 0 ? <p>No job matches.</p> : <JobsTable jobs={live.data.items} />)}
      <Pager cursors={cursors} next={live.data?.next} onChange={setCursors} />
    </>
  );
}
