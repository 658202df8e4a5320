import { useRef, useState } from 'preact/hooks';
import type { ApiEvent, ApiSession, ApiWorkflow, ApiWorkflowStep } from '../../src/transport/http/api-types';
import { get, post } from '../api';
import { dateTime } from '../format';
import { useLive } from '../live';
import { StatusMessage } from '../status-message';

/** Workflow states after which nothing changes (ojs-workflows 8.1). */
const ENDED: ReadonlySet<ApiWorkflow['state']> = new Set(['completed', 'failed', 'cancelled']);

const CANCEL_REASONS: Record<NonNullable<ApiWorkflowStep['cancelReason']>, string> = {
  not_triggered: 'not triggered',
  upstream_failed: 'a step it needs failed',
  workflow_cancelled: 'workflow cancelled',
};

/**
 * One workflow (ojs-workflows 11.2): its state, times and counts, and every
 * job in definition order, each linking to its job's page. It loads again
 * on the workflow's events and on its jobs' events: the stream cannot list
 * up to 1,000 job ids, so it follows every job and workflow event and keeps
 * those of this workflow.
 */
export function WorkflowPage({ id, session }: { id: string; session: ApiSession }) {
  const [message, setMessage] = useState('');
  const stepJobIds = useRef<ReadonlySet<string>>(new Set());
  const live = useLive(
    () => get<ApiWorkflow>(`workflows/${encodeURIComponent(id)}`),
    { types: 'job.*,workflow.*' },
    [id],
    (event: ApiEvent) => event.subject === id || (event.jobId !== undefined && stepJobIds.current.has(event.jobId)),
  );
  // Every job of a workflow exists from its creation: the first answer names them all.
  stepJobIds.current = new Set((live.data?.steps ?? []).flatMap((step) => (step.jobId === undefined ? [] : [step.jobId])));
  if (live.data === undefined) return <p role="status">{live.error ?? 'Loading…'}</p>;
  const workflow = live.data;
  const title = workflow.name === '' ? workflow.id : workflow.name;
  const cancel = async (): Promise<void> => {
    if (!confirm(`Cancel workflow ${title}? Its waiting, pending and active steps are cancelled; this cannot be undone.`)) return;
    try {
      const cancelled = await post<ApiWorkflow>(`workflows/${encodeURIComponent(id)}/cancel`);
      setMessage(`Workflow ${cancelled.state}.`);
    } catch (error) {
      setMessage(`Cancel refused: ${error instanceof Error ? error.message : String(error)}`);
    }
    live.reload();
  };
  return (
    <>
      <h1>
        Workflow <span class={workflow.name === '' ? 'id' : undefined}>{title}</span>{' '}
        <span class={`badge ${workflow.state}`} data-testid="workflow-state">
          {workflow.state}
        </span>
      </h1>
      <StatusMessage text={message} />
      {session.may.cancelWorkflows && !ENDED.has(workflow.state) && (
        <div class="toolbar">
          <button type="button" class="danger" onClick={() => void cancel()}>
            Cancel workflow
          </button>
        </div>
      )}
      {live.error !== undefined && (
        <p role="alert" class="problem">
          {live.error}
        </p>
      )}
      <dl class="envelope">
        <dt>Id</dt>
        <dd class="id">{workflow.id}</dd>
        <dt>Type</dt>
        <dd>{workflow.type}</dd>
        <dt>Jobs</dt>
        <dd data-testid="workflow-counts">
          {workflow.jobCount} in all, {workflow.completedCount} completed, {workflow.failedCount} failed
        </dd>
        <dt>Created</dt>
        <dd>{dateTime(workflow.createdAt)}</dd>
        {workflow.startedAt !== undefined && (
          <>
            <dt>Started</dt>
            <dd>{dateTime(workflow.startedAt)}</dd>
          </>
        )}
        {workflow.completedAt !== undefined && (
          <>
            <dt>Finished</dt>
            <dd>{dateTime(workflow.completedAt)}</dd>
          </>
        )}
      </dl>
      <p>
        <a href={`#/jobs?workflow=${encodeURIComponent(workflow.id)}`}>Its jobs in the job listing</a>
      </p>
      <h2>Steps</h2>
      <StepsTable steps={workflow.steps} />
    </>
  );
}

function StepsTable({ steps }: { steps: ApiWorkflowStep[] }) {
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Role</th>
            <th scope="col">Job type</th>
            <th scope="col">State</th>
            <th scope="col" class="number">
              Attempts
            </th>
            <th scope="col">Started</th>
            <th scope="col">Finished</th>
            <th scope="col">Job</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step) => (
            <tr data-step={step.key}>
              <th scope="row" title={step.path}>
                {step.key}
              </th>
              <td>{step.role}</td>
              <td>{step.type}</td>
              <td data-field="state">
                <span class={`badge ${step.state}`}>{step.state}</span>
                {step.cancelReason !== undefined && <span class="hint"> ({CANCEL_REASONS[step.cancelReason]})</span>}
              </td>
              <td class="number">{step.attempts}</td>
              <td>{dateTime(step.startedAt)}</td>
              <td>{dateTime(step.completedAt)}</td>
              <td class="id">{step.jobId !== undefined && <a href={`#/jobs/${step.jobId}`}>{step.jobId}</a>}</td>
              <td class="error-text" data-field="result">
                {step.resultExcerpt !== undefined && <code>{step.resultExcerpt}</code>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
