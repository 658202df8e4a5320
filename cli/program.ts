import { Command, CommanderError, Option } from 'commander';
import { isAbortError } from 'abort-controller-x';
import { ClientError, Status } from 'nice-grpc';
import { addDeadLetterCommands } from './commands/dead-letter';
import { addEnqueueCommand } from './commands/enqueue';
import { addEventCommands } from './commands/events';
import { addJobCommands } from './commands/jobs';
import { addQueueCommands } from './commands/queues';
import { addScheduleCommands } from './commands/schedules';
import { addWorkerCommands } from './commands/workers';
import { addWorkflowCommands } from './commands/workflows';
import { CliError, ExitCode, exitCodeOfStatus } from './exit-codes';

/** Exit code of an interrupted command (128 + SIGINT), as shells report it. */
const INTERRUPTED = 130;

/** The `ojs` command line: global connection flags, then one group of subcommands per thing an operator steers. */
export function buildProgram(): Command {
  const program = new Command('ojs')
    .description(
      'Operate an OJS job server: enqueue jobs, inspect and steer jobs, queues, cron schedules, workflows, workers and the dead letter.',
    )
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addOption(new Option('-s, --server <host:port>', 'the server').env('OJS_SERVER').default('127.0.0.1:9090'))
    .addOption(new Option('--tls', "TLS, trusting the system's CAs (implied by --tls-ca, --tls-cert)"))
    .addOption(new Option('--tls-ca <file>', "the CA that signed the server's certificate (PEM)").env('OJS_TLS_CA'))
    .addOption(new Option('--tls-cert <file>', 'a client certificate, for mTLS (PEM)').env('OJS_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', "the client certificate's key (PEM)").env('OJS_TLS_KEY'))
    .addOption(new Option('--token <token>', 'a bearer token, sent as authorization: Bearer').env('OJS_TOKEN'))
    .addOption(new Option('--allow-plaintext-token', 'send the token without TLS beyond loopback (a mesh encrypts the hop)'))
    // Not --timeout: enqueue and jobs wait have a --timeout of their own, and commander reads global flags after the subcommand too.
    .addOption(
      new Option('--call-timeout <duration>', 'give up on a call the server has not answered after this long (exit 5)')
        .env('OJS_CALL_TIMEOUT')
        .default('30s'),
    )
    .option('--json', 'one JSON object per line, for scripts')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 other failure, 2 usage error, 3 not found, 4 refused (invalid, wrong state,\n' +
        'unauthenticated, permission denied), 5 unavailable or timed out, 6 the job waited for did not complete.',
    );
  addEnqueueCommand(program);
  addJobCommands(program);
  addDeadLetterCommands(program);
  addQueueCommands(program);
  addScheduleCommands(program);
  addWorkflowCommands(program);
  addWorkerCommands(program);
  addEventCommands(program);
  return program;
}

/** Runs the command line `argv` (as process.argv) and returns the exit code, having said on stderr what went wrong. */
export async function run(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return ExitCode.ok;
  } catch (error) {
    return reported(error);
  }
}

function reported(error: unknown): number {
  // Commander has printed its own message (or the help) already.
  if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  if (isAbortError(error)) return INTERRUPTED;
  if (error instanceof CliError) {
    process.stderr.write(`ojs: ${error.message}\n`);
    return error.exitCode;
  }
  if (error instanceof ClientError) {
    process.stderr.write(`ojs: ${error.details} (${Status[error.code]})\n`);
    return exitCodeOfStatus(error.code);
  }
  process.stderr.write(`ojs: ${error instanceof Error ? error.message : String(error)}\n`);
  return ExitCode.failure;
}
