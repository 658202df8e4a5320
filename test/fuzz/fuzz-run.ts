import { status as Code } from '@grpc/grpc-js';
import type { Duration } from '../../gen/google/protobuf/duration';
import { WaitForJobRequest } from '../../gen/ojs/server/v1/job_service';
import { FetchRequest } from '../../gen/ojs/server/v1/worker_service';
import { CLIENT_MESSAGE_LIMIT_BYTES } from '../../src/domain/limits';
import { mutate } from './byte-mutations';
import type { Draw } from './draw';
import type { FuzzedMethod } from './fuzzed-methods';
import type { FuzzWorld } from './fuzz-world';
import { MessageGenerator } from './message-generator';
import { worldStrings } from './fuzz-values';
import type { CallOutcome, RawCaller, RawRequest, StreamPlan } from './raw-caller';
import { STATEFUL_BUILDERS } from './stateful-requests';

/** A request the fuzzer sent, and why it is a finding. */
export interface FuzzFinding extends RawRequest {
  outcome: CallOutcome;
  problem: string;
}

/** A call that should have ended gets this long; one that has not is a hang. */
const DEADLINE_MS = 8_000;
/** A long poll with nothing to say is cancelled after this long (it is allowed to wait). */
const QUIET_MS = 300;
/** Fetch streams whose max_wait is at most this long must end by themselves. */
const SHORT_WAIT_MS = 2_000;
const REFRESH_EVERY = 150;

/**
 * Sends requests to a server and keeps what no request may earn: INTERNAL
 * or UNKNOWN, no answer before the deadline, or an answer too large for a
 * default client. Requests are drawn from a seed: generated from the
 * request's descriptor, built from live state, or one of those with its
 * bytes mutated.
 */
export class FuzzRun {
  readonly findings: FuzzFinding[] = [];
  /** How many calls ended with each status, by name. */
  readonly statuses = new Map<string, number>();
  sent = 0;
  private readonly generator: MessageGenerator;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly caller: RawCaller,
    private readonly methods: readonly FuzzedMethod[],
    private readonly world: FuzzWorld,
    private readonly draw: Draw,
  ) {
    this.generator = new MessageGenerator(draw, worldStrings(world, draw));
  }

  /** Sends each request once, in order. */
  async sendEach(requests: readonly RawRequest[]): Promise<void> {
    for (const request of requests) await this.send(request);
  }

  /** Sends drawn requests from `lanes` concurrent callers until `count` are sent or `deadline` (epoch ms) passes. */
  async fuzz(count: number, deadline: number, lanes = 6): Promise<void> {
    const lane = async (): Promise<void> => {
      while (this.sent < count && Date.now() < deadline) {
        await this.send(this.drawRequest());
        if (this.sent % REFRESH_EVERY === 0) await this.refresh();
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.world.refresh().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** A method, then its request: generated, built from the world, or mutated. */
  private drawRequest(): RawRequest {
    const { draw } = this;
    const method = draw.pick(this.methods);
    const builder = STATEFUL_BUILDERS[method.path];
    const generated = (): RawRequest => ({
      path: method.path,
      messages: Array.from({ length: method.requestStream ? draw.int(1, 3) : 1 }, () => this.generator.message(method.request)),
      description: 'generated',
    });
    const built = (): RawRequest => (builder === undefined ? generated() : { path: method.path, ...builder(this.world, draw) });
    return draw.weighted<RawRequest>([
      [35, generated],
      [40, built],
      [
        25,
        () => {
          const base = draw.chance(0.5) ? generated() : built();
          const at = draw.int(0, base.messages.length - 1);
          const { bytes, how } = mutate(base.messages[at]!, draw);
          base.messages[at] = bytes;
          return { ...base, description: `${base.description}, then ${how}` };
        },
      ],
    ]);
  }

  private async send(request: RawRequest): Promise<void> {
    this.sent += 1;
    const method = this.methods.find((m) => m.path === request.path);
    if (method === undefined) throw new Error(`no method ${request.path}`);
    const plan = planFor(method, request);
    const outcome = method.requestStream
      ? await this.caller.bidiStream(request.path, request.messages, plan.deadlineMs, plan)
      : method.responseStream
        ? await this.caller.serverStream(request.path, request.messages[0]!, plan.deadlineMs, plan)
        : await this.caller.unary(request.path, request.messages[0]!, plan.deadlineMs);
    const name = outcome.isCancelledByUs ? 'cancelled by the fuzzer' : (Code[outcome.code] ?? String(outcome.code));
    this.statuses.set(name, (this.statuses.get(name) ?? 0) + 1);
    const problem = problemOf(outcome, request);
    if (problem !== undefined) this.findings.push({ ...request, outcome, problem });
  }
}

/**
 * How long a call may take and when the fuzzer ends a stream itself. A
 * client stream is half-closed after its messages and must then be ended by
 * the server; a Fetch with a short max_wait must end by itself; other
 * server streams are long polls, cancelled after their first message or a
 * short quiet.
 */
function planFor(method: FuzzedMethod, request: RawRequest): StreamPlan & { deadlineMs: number } {
  if (method.requestStream) return { cancelOnMessage: false, deadlineMs: DEADLINE_MS };
  const wait = longPollOf(request);
  if (wait !== undefined) {
    const maxWaitMs = shortMaxWaitMs(request.messages[0]!, wait.maxWaitOf);
    if (maxWaitMs !== undefined) return { cancelOnMessage: true, deadlineMs: maxWaitMs + DEADLINE_MS };
    // A long wait is the call doing its job: give up on it as soon as a stream would go quiet.
    if (!method.responseStream) return { cancelOnMessage: true, deadlineMs: QUIET_MS };
  }
  return { cancelOnMessage: true, quietMs: QUIET_MS, deadlineMs: DEADLINE_MS };
}

/**
 * Calls that wait for as long as their max_wait asks (a Fetch long poll,
 * WaitForJob): one with a short max_wait must answer by itself; with a long
 * one (or the default), reaching the fuzzer's deadline is waiting, not a hang.
 */
const LONG_POLLS: readonly { path: string; maxWaitOf: (bytes: Uint8Array) => Duration | undefined }[] = [
  { path: '/Fetch', maxWaitOf: (bytes) => FetchRequest.decode(bytes).maxWait },
  { path: '/WaitForJob', maxWaitOf: (bytes) => WaitForJobRequest.decode(bytes).maxWait },
];

function longPollOf(request: RawRequest): (typeof LONG_POLLS)[number] | undefined {
  return LONG_POLLS.find(({ path }) => request.path.endsWith(path));
}

/** A long poll asked to wait longer than the fuzzer does. */
function isLongWait(request: RawRequest): boolean {
  const poll = longPollOf(request);
  return poll !== undefined && shortMaxWaitMs(request.messages[0]!, poll.maxWaitOf) === undefined;
}

/** The max_wait of a long poll when it decodes and is short (but not none). */
function shortMaxWaitMs(bytes: Uint8Array, maxWaitOf: (bytes: Uint8Array) => Duration | undefined): number | undefined {
  try {
    const maxWait = maxWaitOf(bytes);
    if (maxWait === undefined) return undefined;
    const ms = maxWait.seconds * 1000 + maxWait.nanos / 1e6;
    return ms > 0 && ms <= SHORT_WAIT_MS ? ms : undefined;
  } catch {
    return undefined;
  }
}

function problemOf(outcome: CallOutcome, request: RawRequest): string | undefined {
  if (outcome.isCancelledByUs) return undefined;
  if (outcome.code === Code.INTERNAL || outcome.code === Code.UNKNOWN) return `answered ${Code[outcome.code]}`;
  if (outcome.code === Code.DEADLINE_EXCEEDED && !isLongWait(request)) return 'no answer before the deadline (a hang)';
  // grpc-js's words for a message over its receive limit: the server's for a request over 4 MiB, else the client's for the answer.
  const isRequestTooLarge = request.messages.some((bytes) => bytes.length > CLIENT_MESSAGE_LIMIT_BYTES);
  if (outcome.code === Code.RESOURCE_EXHAUSTED && /larger than max/i.test(outcome.details) && !isRequestTooLarge) {
    return 'an answer larger than a default client accepts';
  }
  return undefined;
}

/** A finding as a failure message: what was sent (hex, shortened), what came back, and how to replay. */
export function describeFinding(finding: FuzzFinding, seed: number): string {
  const hex = finding.messages.map((bytes) => {
    const text = Buffer.from(bytes).toString('hex');
    return text.length <= 2_000 ? text : `${text.slice(0, 2_000)}... (${bytes.length} bytes)`;
  });
  return (
    `${finding.path} (${finding.description}): ${finding.problem}; status ${Code[finding.outcome.code]} "${finding.outcome.details}"; ` +
    `request ${hex.join(' | ')}; replay with OJS_FUZZ_SEED=${seed}`
  );
}
