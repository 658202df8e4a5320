import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../project-root';
import { ackScript } from './scripts/ack';
import { auditScript } from './scripts/audit';
import { cancelScript } from './scripts/cancel';
import { cancelJobsScript } from './scripts/cancel-jobs';
import { claimScript } from './scripts/claim';
import { deleteJobsScript } from './scripts/delete-jobs';
import { directWorkerScript } from './scripts/direct-worker';
import { discardWaitingScript } from './scripts/discard-waiting';
import { enqueueScript } from './scripts/enqueue';
import { extendLeaseScript } from './scripts/extend-lease';
import { failScript } from './scripts/fail';
import { findExpiredLeasesScript } from './scripts/find-expired-leases';
import { findExpiredWaitingScript } from './scripts/find-expired-waiting';
import { findSilentWorkersScript } from './scripts/find-silent-workers';
import { getJobsScript } from './scripts/get-jobs';
import { getWorkerScript } from './scripts/get-worker';
import { listActiveHeartbeatsScript } from './scripts/list-active-heartbeats';
import { listJobsScript } from './scripts/list-jobs';
import { listQueuesScript } from './scripts/list-queues';
import { listWorkersScript } from './scripts/list-workers';
import { makeAvailableScript } from './scripts/make-available';
import { promoteDueScript } from './scripts/promote-due';
import { pruneFactsScript } from './scripts/prune-facts';
import { pruneTerminalScript } from './scripts/prune-terminal';
import { queueStatsScript } from './scripts/queue-stats';
import { readFactsScript } from './scripts/read-facts';
import { recordBeatScript } from './scripts/record-beat';
import { recordProgressScript } from './scripts/record-progress';
import { recoverScript } from './scripts/recover';
import { registerWorkerScript } from './scripts/register-worker';
import { releaseUndeliveredScript } from './scripts/release-undelivered';
import { removeWorkerScript } from './scripts/remove-worker';
import { retryJobsScript } from './scripts/retry-jobs';
import { setQueueLimitsScript } from './scripts/set-queue-limits';
import { setQueuePausedScript } from './scripts/set-queue-paused';
import { takeSoftTimeoutsScript } from './scripts/take-soft-timeouts';
import { findDueSchedulesScript } from './scripts/find-due-schedules';
import { fireTicksScript } from './scripts/fire-ticks';
import { getScheduleScript } from './scripts/get-schedule';
import { listSchedulesScript } from './scripts/list-schedules';
import { registerScheduleScript } from './scripts/register-schedule';
import { removeScheduleScript } from './scripts/remove-schedule';
import { setSchedulePausedScript } from './scripts/set-schedule-paused';
import { cancelWorkflowScript } from './scripts/cancel-workflow';
import { createWorkflowScript } from './scripts/create-workflow';
import { getWorkflowScript } from './scripts/get-workflow';

/**
 * Every script the store runs: one per operation, each declared in
 * scripts/<name>.ts beside lua/<name>.lua. A unit test checks that every
 * .lua file is declared here and every declaration has its file.
 */
export const SCRIPTS = [
  enqueueScript,
  getJobsScript,
  claimScript,
  releaseUndeliveredScript,
  ackScript,
  failScript,
  recoverScript,
  extendLeaseScript,
  recordProgressScript,
  cancelScript,
  makeAvailableScript,
  promoteDueScript,
  findExpiredWaitingScript,
  discardWaitingScript,
  takeSoftTimeoutsScript,
  findExpiredLeasesScript,
  listActiveHeartbeatsScript,
  pruneTerminalScript,
  registerWorkerScript,
  getWorkerScript,
  listWorkersScript,
  findSilentWorkersScript,
  recordBeatScript,
  directWorkerScript,
  removeWorkerScript,
  listQueuesScript,
  queueStatsScript,
  setQueuePausedScript,
  setQueueLimitsScript,
  listJobsScript,
  cancelJobsScript,
  retryJobsScript,
  deleteJobsScript,
  readFactsScript,
  pruneFactsScript,
  registerScheduleScript,
  removeScheduleScript,
  getScheduleScript,
  listSchedulesScript,
  setSchedulePausedScript,
  findDueSchedulesScript,
  fireTicksScript,
  createWorkflowScript,
  getWorkflowScript,
  cancelWorkflowScript,
  auditScript,
] as const;

/** Where the .lua files live (read from src/ in both source and compiled runs). */
export const LUA_DIR = join(projectRoot(), 'src', 'store', 'redis', 'lua');

/**
 * The libraries of every script, in order: the rules generated from the
 * domain (tools/generate-lua-prelude.ts), then the shared helpers, each
 * built on those before it (arguments; writes, facts and state changes;
 * job changes; new jobs; schedules; workers; workflows, which every job
 * change may advance, so every script holds them). Redis loads them once,
 * in the function library (function-library.ts).
 */
export const LUA_LIBRARIES = [
  'lib/domain.lua',
  'lib/arguments.lua',
  'lib/ojs.lua',
  'lib/job-changes.lua',
  'lib/new-jobs.lua',
  'lib/schedules.lua',
  'lib/workers.lua',
  'lib/workflows.lua',
] as const;

/** The number of keys every script names (RedisKeys.scriptKeys, lua/lib/ojs.lua KEY_NAMES), in the key list of its settings. */
export const SCRIPT_KEY_COUNT = 30;

function luaFile(file: string): string {
  return readFileSync(join(LUA_DIR, file), 'utf8');
}

/** The libraries' definitions, in order: what the function library holds before its functions. */
export function libraryDefinitions(): string {
  return LUA_LIBRARIES.map(luaFile).join('\n');
}

/** The text of lua/<name>.lua: a script's body, which reads its call's KEYS and ARGV through the libraries. */
export function scriptBody(name: string): string {
  return luaFile(`${name}.lua`);
}

/**
 * The libraries as a prelude for EVAL, which tests use to run the helpers
 * the functions run: the definitions, then the start of a call
 * (lib/arguments.lua begin) on the EVAL's own KEYS and ARGV.
 */
export function libraryPrelude(): string {
  return `${libraryDefinitions()}\nbegin(KEYS, ARGV)\n`;
}
