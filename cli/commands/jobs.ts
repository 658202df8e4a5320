import type { Command } from 'commander';
import { JobState } from '../../gen/ojs/server/v1/job';
import { runBulk } from '../bulk';
import { parseDuration } from '../../lib/duration';
import { CliError, ExitCode, usageError } from '../exit-codes';
import { addJobFilterOptions, jobFilter, type JobFilterOptions } from '../job-filter';
import { addPagingOptions, listJobs, type PagingOptions } from '../job-listing';
import { jobJson, jobStateName, printJob } from '../job-view';
import { withSession } from '../session';

/** The longest single WaitForJob the server allows; longer waits ask again. */
const MAX_WAIT_PER_CALL_MS = 3_600_000;

/** `ojs jobs ...`: list, get, cancel, retry and wait for jobs. */
export function addJobCommands(program: Command): void {
  const jobs = program.command('jobs').description('list, inspect, cancel, retry and wait for jobs');

  addPagingOptions(addJobFilterOptions(jobs.command('list').description('list jobs, newest first'), true)).action(
    (options: JobFilterOptions & PagingOptions, command: Command) =>
      withSession(command, (session) => listJobs(session, jobFilter(options, session.nowMs()), options)),
  );

  jobs
    .command('get')
    .description('show one job: envelope, state, result or last error')
    .argument('<id>', 'the job id')
    .action((id: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        const { job } = await session.connection.jobs.getJob({ jobId: id });
        if (job === undefined) throw new CliError('the server answered without a job', ExitCode.failure);
        if (session.output.isJson) session.output.json(jobJson(job));
        else printJob(session.output, job, session.nowMs());
      }),
    );

  jobs
    .command('cancel')
    .description('cancel jobs that have not finished (active ones are stopped on their worker)')
    .argument('<ids...>', 'job ids')
    .option('--reason <text>', 'why, recorded in the job.cancelled event')
    .action((ids: string[], options: { reason?: string }, command: Command) =>
      withSession(command, (session) =>
        runBulk(
          session,
          { done: 'cancelled', call: (selection) => session.connection.operator.cancelJobs({ selection, reason: options.reason ?? '' }) },
          { ids },
          false,
        ),
      ),
    );

  jobs
    .command('retry')
    .description('make discarded jobs available again, and retryable ones available now')
    .argument('<ids...>', 'job ids')
    .action((ids: string[], _options: unknown, command: Command) =>
      withSession(command, (session) =>
        runBulk(session, { done: 'retried', call: (selection) => session.connection.operator.retryJobs({ selection }) }, { ids }, false),
      ),
    );

  jobs
    .command('wait')
    .description('wait until a job finishes and show it; exits 6 when it was cancelled or discarded')
    .argument('<id>', 'the job id')
    .option('--timeout <duration>', 'give up after this long (exit 5), e.g. 30s or 10m', '1h')
    .action((id: string, options: { timeout: string }, command: Command) =>
      withSession(
        command,
        async (session) => {
          const timeoutMs = parseDuration(options.timeout);
          if (timeoutMs === undefined) throw usageError(`--timeout: "${options.timeout}" is not a duration such as 30s or 10m`);
          const deadline = session.nowMs() + timeoutMs;
          for (;;) {
            const waitMs = Math.max(1, Math.min(MAX_WAIT_PER_CALL_MS, deadline - session.nowMs()));
            const answer = await session.connection.jobs.waitForJob(
              { jobId: id, maxWait: { seconds: Math.floor(waitMs / 1000), nanos: (waitMs % 1000) * 1e6 } },
              // The server holds the call for maxWait: the call's deadline allows that and a usual call's time on top.
              { signal: session.signal, deadline: waitMs + session.connection.callTimeoutMs },
            );
            const { job } = answer;
            if (job === undefined) throw new CliError('the server answered without a job', ExitCode.failure);
            if (answer.finished || session.nowMs() >= deadline) {
              if (session.output.isJson) session.output.json(jobJson(job));
              else printJob(session.output, job, session.nowMs());
              if (!answer.finished)
                throw new CliError(`job ${id} is still ${jobStateName(job.state)} after ${options.timeout}`, ExitCode.unavailable);
              if (job.state !== JobState.JOB_STATE_COMPLETED)
                throw new CliError(`job ${id} finished ${jobStateName(job.state)}`, ExitCode.jobFailed);
              return;
            }
          }
        },
        { isInterruptible: true },
      ),
    );
}
