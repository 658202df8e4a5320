import type { ApiJob } from '../../src/transport/http/api-types';
import { dateTime } from '../format';

/** A table of jobs linking to their pages; with `selected`, a checkbox per row and one for all. */
export function JobsTable({
  jobs,
  selected,
  onSelect,
}: {
  jobs: ApiJob[];
  selected?: ReadonlySet<string>;
  onSelect?: (ids: string[], isSelected: boolean) => void;
}) {
  const isAll = selected !== undefined && jobs.length > 0 && jobs.every((job) => selected.has(job.id));
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            {selected !== undefined && (
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every job on this page"
                  checked={isAll}
                  onChange={(e) =>
                    onSelect?.(
                      jobs.map((j) => j.id),
                      e.currentTarget.checked,
                    )
                  }
                />
              </th>
            )}
            <th scope="col">Job</th>
            <th scope="col">Type</th>
            <th scope="col">Queue</th>
            <th scope="col">State</th>
            <th scope="col" class="number">
              Attempt
            </th>
            <th scope="col">Last error</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((job) => (
            <tr data-job={job.id}>
              {selected !== undefined && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select job ${job.id}`}
                    checked={selected.has(job.id)}
                    onChange={(e) => onSelect?.([job.id], e.currentTarget.checked)}
                  />
                </td>
              )}
              <th scope="row" class="id">
                <a href={`#/jobs/${job.id}`}>{job.id}</a>
              </th>
              <td>{job.type}</td>
              <td>{job.queue}</td>
              <td>
                <span class={`badge ${job.state}`}>{job.state}</span>
              </td>
              <td class="number">
                {job.attempt} / {job.maxAttempts}
              </td>
              <td class="error-text">{job.error === undefined ? '' : `${job.error.type}: ${job.error.message}`}</td>
              <td>{dateTime(job.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
