import { JobState } from '../gen/ojs/server/v1/job';
import type { BulkItemResult, BulkResult, JobFilter, JobSelection } from '../gen/ojs/server/v1/operator_service';
import { CliError, ExitCode } from './exit-codes';
import { jobStateName } from './job-view';
import type { Session } from './session';
import { toWire } from './wire';

/** Jobs a bulk call names by id at most (JobIds); longer lists go in several calls. */
const IDS_PER_CALL = 1_000;

/** What a bulk command acts on: jobs by id, or every job a filter selects. */
export type BulkTarget = { ids: string[] } | { filter: JobFilter };

export interface BulkCommand {
  /** The past tense of the operation, for the summary: "retried", "deleted", "cancelled". */
  done: string;
  /** One call of CancelJobs, RetryJobs or DeleteJobs. */
  call(selection: JobSelection): Promise<{ result?: BulkResult | undefined }>;
}

/**
 * Runs a bulk operation to the end: ids in batches, a filter page after
 * page until the server has no more (each job changed once), then prints
 * what happened. Exits not-found when every refused job was unknown, and
 * refused when any was refused for another reason (a wrong state...).
 */
export async function runBulk(session: Session, command: BulkCommand, target: BulkTarget, isDryRun: boolean): Promise<void> {
  const total = { matched: 0, succeeded: 0, failed: 0, items: [] as BulkItemResult[] };
  const add = (result: BulkResult | undefined): void => {
    total.matched += result?.matched ?? 0;
    total.succeeded += result?.succeeded ?? 0;
    total.failed += result?.failed ?? 0;
    total.items.push(...(result?.items ?? []));
  };
  if ('ids' in target) {
    for (let start = 0; start < target.ids.length; start += IDS_PER_CALL) {
      const ids = target.ids.slice(start, start + IDS_PER_CALL);
      add((await command.call({ target: { $case: 'jobIds', value: { ids } }, dryRun: isDryRun, limit: 0, pageToken: '' })).result);
    }
  } else {
    let pageToken = '';
    do {
      const { result } = await command.call({ target: { $case: 'filter', value: target.filter }, dryRun: isDryRun, limit: 0, pageToken });
      add(result);
      pageToken = result?.nextPageToken ?? '';
    } while (pageToken !== '');
  }
  printBulk(session, command, total, isDryRun);
  const refused = total.items.filter((item) => !item.ok);
  if (refused.length === 0) return;
  const isAllNotFound = refused.every((item) => item.errorCode === 'not_found');
  throw new CliError(`${refused.length} job(s) refused`, isAllNotFound ? ExitCode.notFound : ExitCode.refused);
}

function printBulk(
  { output }: Session,
  command: BulkCommand,
  total: { matched: number; succeeded: number; failed: number; items: BulkItemResult[] },
  isDryRun: boolean,
): void {
  if (output.isJson) {
    output.json({
      dry_run: isDryRun,
      matched: total.matched,
      succeeded: total.succeeded,
      failed: total.failed,
      items: total.items.map((item) =>
        toWire({ ...item, state: item.ok && item.state !== JobState.JOB_STATE_UNSPECIFIED ? jobStateName(item.state) : undefined }),
      ),
    });
    return;
  }
  for (const item of total.items.filter((i) => !i.ok))
    output.line(`${item.jobId}: ${output.paint('red', item.errorCode)} ${item.errorMessage}`);
  output.line(
    isDryRun
      ? `dry run: ${total.succeeded} of ${total.matched} matching job(s) would be ${command.done}`
      : `${command.done} ${total.succeeded} of ${total.matched} matching job(s)`,
  );
}
