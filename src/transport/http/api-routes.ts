import type { Application } from '../../app/application';
import type { BulkOperation } from '../../app/bulk-changes';
import { invalidRequest } from '../../domain/errors';
import { queueNameProblem, workerIdProblem } from '../../domain/identifiers';
import { JOB_STATES, type JobState } from '../../domain/job';
import { isListingKey, type JobFilterInput } from '../../domain/job-query';
import { MAX_PAGE_SIZE, pageRequest } from '../../domain/paging';
import type { Principal } from '../../domain/principal';
import type { WorkerState } from '../../domain/worker';
import type { WorkerFilter, WorkerTarget } from '../../store/job-store';
import { JobServiceDefinition } from '../../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../../../gen/ojs/server/v1/operator_service';
import { WorkflowServiceDefinition } from '../../../gen/ojs/server/v1/workflow_service';
import { fromPageToken, toPageToken } from '../grpc/page-token';
import { toApiBulkResult, toApiJob, toApiJobDetail, toApiQueue, toApiQueueStats, toApiWorker, toApiWorkflow } from './api-mapping';
import type { ApiPage, ApiQueue, ApiSession, ApiWorker, ApiJob, ApiWorkflow } from './api-types';
import { mayCall } from './http-auth';

/** What a route handler gets: the authorised caller, the path's parameters, the query and the JSON body. */
export interface ApiCall {
  caller: Principal;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  body: unknown;
}

/** One route of the dashboard's JSON API. */
export interface ApiRoute {
  method: 'GET' | 'POST';
  /** Segments after /api/; ":name" matches one segment into params.name. */
  path: string;
  /** The full path of the gRPC method whose rule (method-rules.ts) decides who may call this route. */
  grpcMethod: string;
  handle(call: ApiCall): Promise<unknown>;
}

type OperatorMethod = keyof typeof OperatorServiceDefinition.methods;

/** The full path of an OperatorService method, as the authorisation table keys it. */
export function operatorMethod(key: OperatorMethod): string {
  return `/${OperatorServiceDefinition.fullName}/${OperatorServiceDefinition.methods[key].name}`;
}

const GET_JOB = `/${JobServiceDefinition.fullName}/${JobServiceDefinition.methods.getJob.name}`;
const GET_WORKFLOW = `/${WorkflowServiceDefinition.fullName}/${WorkflowServiceDefinition.methods.getWorkflow.name}`;
const CANCEL_WORKFLOW = `/${WorkflowServiceDefinition.fullName}/${WorkflowServiceDefinition.methods.cancelWorkflow.name}`;
const WORKER_STATES: readonly WorkerState[] = ['running', 'quiet', 'terminate'];

/**
 * The routes, each a thin mapping onto the application layer that the gRPC
 * handlers use (no rule of its own), authorised as the gRPC method it names.
 */
export function apiRoutes(app: Application, isAuthRequired: boolean): ApiRoute[] {
  const now = (): number => app.context.clock.now();
  const bulk = (operation: BulkOperation, key: OperatorMethod): ApiRoute => ({
    method: 'POST',
    path: `jobs/${operation}`,
    grpcMethod: operatorMethod(key),
    handle: async ({ caller, body }) =>
      toApiBulkResult(await app.bulk.apply(caller, { operation, selection: { kind: 'ids', ids: jobIdsOf(body) }, dryRun: false })),
  });
  return [
    {
      // Opening the dashboard is reading the queues: a principal that may not has nothing to see.
      method: 'GET',
      path: 'session',
      grpcMethod: operatorMethod('listQueues'),
      handle: async ({ caller }): Promise<ApiSession> => ({
        principal: caller.name,
        isAuthRequired,
        may: {
          pauseQueues: mayCall(caller, operatorMethod('pauseQueue')) && mayCall(caller, operatorMethod('resumeQueue')),
          steerWorkers: mayCall(caller, operatorMethod('setWorkerState')),
          retryJobs: mayCall(caller, operatorMethod('retryJobs')),
          deleteJobs: mayCall(caller, operatorMethod('deleteJobs')),
          cancelJobs: mayCall(caller, operatorMethod('cancelJobs')),
          cancelWorkflows: mayCall(caller, CANCEL_WORKFLOW),
        },
      }),
    },
    {
      method: 'GET',
      path: 'queues',
      grpcMethod: operatorMethod('listQueues'),
      handle: async ({ caller, query }): Promise<ApiPage<ApiQueue>> => {
        const page = await app.queues.list(caller, pageRequest(pageSizeOf(query), query.get('after') ?? '', queueNameProblem));
        const at = now();
        return { items: page.items.map((counts) => toApiQueue(counts, at)), ...nextOf(page.nextAfter), now: at };
      },
    },
    {
      method: 'GET',
      path: 'queues/:queue/stats',
      grpcMethod: operatorMethod('getQueueStats'),
      handle: async ({ caller, params }) => toApiQueueStats(await app.queues.stats(caller, params['queue']!), now()),
    },
    {
      method: 'POST',
      path: 'queues/:queue/pause',
      grpcMethod: operatorMethod('pauseQueue'),
      handle: async ({ caller, params }) => toApiQueue(await app.queues.setPaused(caller, params['queue']!, true, caller.name), now()),
    },
    {
      method: 'POST',
      path: 'queues/:queue/resume',
      grpcMethod: operatorMethod('resumeQueue'),
      handle: async ({ caller, params }) => toApiQueue(await app.queues.setPaused(caller, params['queue']!, false, caller.name), now()),
    },
    {
      method: 'GET',
      path: 'workers',
      grpcMethod: operatorMethod('listWorkers'),
      handle: async ({ caller, query }): Promise<ApiPage<ApiWorker>> => {
        const filter: WorkerFilter = {};
        if (query.get('label')) filter.label = query.get('label')!;
        if (query.get('queue')) filter.queue = query.get('queue')!;
        const page = await app.workers.list(caller, filter, pageRequest(pageSizeOf(query), query.get('after') ?? '', workerIdProblem));
        return { items: page.items.map(toApiWorker), ...nextOf(page.nextAfter), now: now() };
      },
    },
    {
      method: 'POST',
      path: 'workers/state',
      grpcMethod: operatorMethod('setWorkerState'),
      handle: async ({ caller, body }) => {
        const { target, state } = directionOf(body);
        const directed = await app.workers.direct(caller, target, state);
        return { workerIds: directed.slice(0, MAX_PAGE_SIZE), directed: directed.length };
      },
    },
    {
      method: 'GET',
      path: 'jobs',
      grpcMethod: operatorMethod('listJobs'),
      handle: async ({ caller, query }): Promise<ApiPage<ApiJob>> => {
        const after = fromPageToken(query.get('after') ?? '', isListingKey, 'after');
        const page = await app.listing.list(caller, {
          filter: jobFilterOf(query),
          order: query.get('order') === 'oldest' ? 'oldest' : 'newest',
          pageSize: pageSizeOf(query),
          ...(after === undefined ? {} : { after }),
        });
        const next = toPageToken(page.nextAfter);
        return { items: page.items.map(toApiJob), ...(next === '' ? {} : { next }), now: now() };
      },
    },
    {
      method: 'GET',
      path: 'jobs/:id',
      grpcMethod: GET_JOB,
      handle: async ({ caller, params }) => toApiJobDetail(await app.jobs.get(caller, params['id']!)),
    },
    {
      method: 'GET',
      path: 'workflows/:id',
      grpcMethod: GET_WORKFLOW,
      handle: async ({ caller, params }): Promise<ApiWorkflow> => toApiWorkflow(await app.workflows.get(caller, params['id']!)),
    },
    {
      method: 'POST',
      path: 'workflows/:id/cancel',
      grpcMethod: CANCEL_WORKFLOW,
      handle: async ({ caller, params }): Promise<ApiWorkflow> => toApiWorkflow(await app.workflows.cancel(caller, params['id']!)),
    },
    bulk('retry', 'retryJobs'),
    bulk('delete', 'deleteJobs'),
    bulk('cancel', 'cancelJobs'),
  ];
}

function nextOf(nextAfter: string | undefined): { next?: string } {
  return nextAfter === undefined ? {} : { next: nextAfter };
}

function pageSizeOf(query: URLSearchParams): number {
  const text = query.get('pageSize');
  if (text === null || text === '') return 0;
  // pageRequest and pageLimit refuse what is not a whole number in range.
  return /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
}

/**
 * A listing filter from the query: states as a comma-separated list, queue,
 * type, schedule, errorType, workflow (a workflow's id), deadLetter=true|false.
 */
export function jobFilterOf(query: URLSearchParams): JobFilterInput {
  const states = (query.get('states') ?? '').split(',').filter((state) => state !== '');
  const known: readonly string[] = JOB_STATES;
  for (const state of states) if (!known.includes(state)) throw invalidRequest('states', `must list states of ${JOB_STATES.join(', ')}`);
  const deadLetter = query.get('deadLetter');
  if (deadLetter !== null && deadLetter !== 'true' && deadLetter !== 'false') throw invalidRequest('deadLetter', 'must be true or false');
  return {
    // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- each was checked against JOB_STATES above
    states: states as JobState[],
    queue: query.get('queue') ?? '',
    type: query.get('type') ?? '',
    schedule: query.get('schedule') ?? '',
    errorType: query.get('errorType') ?? '',
    workflow: query.get('workflow') ?? '',
    ...(deadLetter === null ? {} : { deadLetter: deadLetter === 'true' }),
  };
}

/** The job ids of a bulk request body: `{ "ids": ["...", ...] }` (the app layer checks each id and the count). */
function jobIdsOf(body: unknown): string[] {
  const ids = isObject(body) ? body['ids'] : undefined;
  if (!Array.isArray(ids) || !ids.every((id): id is string => typeof id === 'string')) {
    throw invalidRequest('ids', 'expected a list of job ids');
  }
  return ids;
}

/** A worker direction body: `{ "state": "quiet", "workerId" | "label" | "queue": "..." }`. */
function directionOf(body: unknown): { target: WorkerTarget; state: WorkerState } {
  if (!isObject(body)) throw invalidRequest('body', 'expected a JSON object');
  const state = WORKER_STATES.find((s) => s === body['state']);
  if (state === undefined) throw invalidRequest('state', `must be one of ${WORKER_STATES.join(', ')}`);
  const targets = (['workerId', 'label', 'queue'] as const).filter((key) => typeof body[key] === 'string' && body[key] !== '');
  if (targets.length !== 1) throw invalidRequest('target', 'set exactly one of workerId, label or queue');
  const key = targets[0]!;
  const value = String(body[key]);
  const target: WorkerTarget = key === 'workerId' ? { workerId: value } : key === 'label' ? { label: value } : { queue: value };
  return { target, state };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
