import type { Command } from 'commander';
import type { Job } from '../../gen/ojs/server/v1/job';
import { CliError, ExitCode } from '../exit-codes';
import { parseTime } from '../job-filter';
import { addJobTemplateOptions, jobTemplate, parseArgs, type JobTemplateOptions } from '../job-template';
import { jobJson, jobStateName } from '../job-view';
import { withSession } from '../session';

interface EnqueueOptions extends JobTemplateOptions {
  id?: string;
  at?: string;
  pending?: boolean;
}

/** The envelope the flags describe: the job template, its own id and when it runs. */
function envelope(type: string, argsJson: string | undefined, options: EnqueueOptions, nowMs: number): Partial<Job> {
  return {
    ...jobTemplate(type, parseArgs('args', argsJson), options),
    id: options.id ?? '',
    scheduledAt: parseTime('--at', options.at, nowMs, 1),
  };
}

/** `ojs enqueue <type> [args]`. */
export function addEnqueueCommand(program: Command): void {
  addJobTemplateOptions(
    program
      .command('enqueue')
      .description('enqueue a job and print its id (or, with --json, its envelope)')
      .argument('<type>', 'the job type, such as email.send')
      .argument('[args]', 'the positional arguments as a JSON array, such as \'["ada@example.com"]\'')
      .option('--id <uuid>', 'a UUIDv7 of your own, which makes the enqueue idempotent')
      .option('--at <time>', 'run at an RFC 3339 time, or after a duration such as 10m')
      .option('--pending', 'stage the job as pending until it is activated'),
  ).action((type: string, argsJson: string | undefined, options: EnqueueOptions, command: Command) =>
    withSession(command, async (session) => {
      const job = envelope(type, argsJson, options, session.nowMs());
      const { jobs, outcomes } = await session.connection.jobs.enqueue({ jobs: [job], pending: options.pending === true });
      const stored = jobs[0];
      if (stored === undefined) throw new CliError('the server answered without the job', ExitCode.failure);
      if (session.output.isJson) session.output.json(jobJson(stored));
      else session.output.line(`${stored.id}  ${stored.type} on ${stored.queue}, ${jobStateName(stored.state)}`);
      // What the unique policy did, beside the result so that stdout stays the job.
      if (outcomes[0]?.deduplicated === true) session.output.note(`deduplicated: job ${stored.id} already holds the uniqueness key`);
      const replaced = outcomes[0]?.replacedJobId ?? '';
      if (replaced !== '') session.output.note(`replaced job ${replaced}, now cancelled`);
    }),
  );
}
