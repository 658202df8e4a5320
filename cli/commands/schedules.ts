import { Option, type Command } from 'commander';
import type { DeepPartial, Schedule } from '../../gen/ojs/server/v1/schedule_service';
import { CliError, ExitCode } from '../exit-codes';
import { addJobTemplateOptions, jobTemplate, parseArgs, type JobTemplateOptions } from '../job-template';
import { printSchedule, printScheduleTable, scheduleJson } from '../schedule-view';
import { withSession, type Session } from '../session';

interface AddOptions extends JobTemplateOptions {
  timezone?: string;
  args?: string;
  overlap?: string;
  missedTicks?: string;
  description?: string;
  paused?: boolean;
}

/** The schedule of an answer, which the contract always sets. */
function answered(schedule: Schedule | undefined): Schedule {
  if (schedule === undefined) throw new CliError('the server answered without the schedule', ExitCode.failure);
  return schedule;
}

function printOne(session: Session, schedule: Schedule): void {
  if (session.output.isJson) session.output.json(scheduleJson(schedule));
  else printSchedule(session.output, schedule, session.nowMs());
}

/**
 * The registration the arguments and flags describe. The server checks it
 * all (name, expression, zone, policies, template) and names every bad
 * field at once; the command checks only what it parses itself (JSON, numbers).
 */
function registration(name: string, cron: string, type: string, options: AddOptions): DeepPartial<Schedule> {
  return {
    name,
    cron,
    timezone: options.timezone ?? '',
    template: jobTemplate(type, parseArgs('--args', options.args), options),
    overlapPolicy: options.overlap ?? '',
    missedTickPolicy: options.missedTicks ?? '',
    description: options.description ?? '',
    paused: options.paused === true,
  };
}

/** PauseSchedule or ResumeSchedule, then the schedule as it now is. */
function addPauseCommand(schedules: Command, name: 'pause' | 'resume', description: string): void {
  schedules
    .command(name)
    .description(description)
    .argument('<name>', 'the schedule')
    .action((schedule: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        const client = session.connection.schedules;
        const answer = name === 'pause' ? await client.pauseSchedule({ name: schedule }) : await client.resumeSchedule({ name: schedule });
        printOne(session, answered(answer.schedule));
      }),
    );
}

/** `ojs schedules ...`: list, show, add (or replace), pause, resume and delete cron schedules. */
export function addScheduleCommands(program: Command): void {
  const schedules = program.command('schedules').description('list, show, add, pause, resume and delete cron schedules');

  schedules
    .command('list')
    .description('every schedule in name order, with its next and last run')
    .addOption(new Option('--paused', 'only paused schedules').conflicts('running'))
    .addOption(new Option('--running', 'only schedules that are not paused'))
    .action((options: { paused?: boolean; running?: boolean }, command: Command) =>
      withSession(command, async (session) => {
        const paused = options.paused === true ? true : options.running === true ? false : undefined;
        const all: Schedule[] = [];
        let pageToken = '';
        do {
          const page = await session.connection.schedules.listSchedules({ pageSize: 1000, pageToken, paused });
          all.push(...page.schedules);
          pageToken = page.nextPageToken;
        } while (pageToken !== '');
        if (session.output.isJson) for (const schedule of all) session.output.json(scheduleJson(schedule));
        else printScheduleTable(session.output, all, session.nowMs());
      }),
    );

  schedules
    .command('get')
    .description('show one schedule: its expression, policies, job template, next and last run')
    .argument('<name>', 'the schedule')
    .action((name: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        printOne(session, answered((await session.connection.schedules.getSchedule({ name })).schedule));
      }),
    );

  addJobTemplateOptions(
    schedules
      .command('add')
      .description(
        'create a schedule, or replace the one of that name (all of it: re-adding a paused schedule without --paused resumes it)',
      )
      .argument('<name>', 'the schedule: lowercase letters, digits, hyphens and dots, such as daily-report')
      .argument('<cron>', 'when, in quotes: five fields (minute hour day-of-month month day-of-week), six with seconds first, or @daily...')
      .argument('<type>', 'the type of the job each tick enqueues, such as report.generate')
      .option('--timezone <zone>', 'an IANA zone the expression is read in, such as America/New_York (default: UTC)')
      .option('--args <json>', "the job's positional arguments as a JSON array, such as '[\"daily\"]'")
      .option('--overlap <policy>', "while the previous tick's job has not finished: skip (the default), allow or cancel_previous")
      .option('--missed-ticks <policy>', 'ticks no replica fired in time: run_once (the default: the latest fires once) or skip')
      .option('--description <text>', 'free text for people')
      .option('--paused', 'register it paused: no tick fires until `ojs schedules resume`'),
  ).action((name: string, cron: string, type: string, options: AddOptions, command: Command) =>
    withSession(command, async (session) => {
      const answer = await session.connection.schedules.registerSchedule({ schedule: registration(name, cron, type, options) });
      const schedule = answered(answer.schedule);
      // Beside the result, so that stdout stays the schedule.
      session.output.note(`${answer.created ? 'created' : 'updated'} schedule ${schedule.name}`);
      printOne(session, schedule);
    }),
  );

  addPauseCommand(schedules, 'pause', 'stop the ticks of a schedule without removing it');
  addPauseCommand(schedules, 'resume', 'restart a paused schedule from its next occurrence (the ticks it passed are not made up)');

  schedules
    .command('delete')
    .description('remove a schedule; the jobs it made stay')
    .argument('<name>', 'the schedule')
    .action((name: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        await session.connection.schedules.deleteSchedule({ name });
        if (session.output.isJson) session.output.json({ name, deleted: true });
        else session.output.line(`deleted schedule ${name}`);
      }),
    );
}
