import type { Cluster, Redis } from 'ioredis';
import { backendUnavailable } from '../../domain/errors';
import { compareCursors, type RecordedFact } from '../../domain/event-facts';
import { decodeFactEntries, type FactEntries } from './fact-codec';
import { readArray } from './reply';
import type { FactLogPage } from './scripts/read-facts';

export interface FactFollowerOptions {
  /** Opens the connection the live read blocks on (once, when first needed). */
  open: () => Redis | Cluster;
  /** The event log stream's key. */
  key: string;
  /** A page of the log after a cursor (or its start), with its newest cursor: read-facts on the command connection. */
  read: (after: string | undefined, limit: number) => Promise<FactLogPage>;
  /** How long one live read blocks: how long the loop may outlive its last follower. */
  blockMs: number;
  /** Most facts per read. */
  pageSize: number;
}

interface Follower {
  /** The cursor of the last fact delivered (or of the starting point). */
  cursor: string;
  listener: (facts: RecordedFact[]) => void;
  /** Whether it takes its facts from the live loop (it caught up). */
  isLive: boolean;
  isStopped: boolean;
}

/**
 * Delivers the event log to followers, each from its own cursor, in order
 * and each fact once. One loop per store blocks on XREAD on a connection of
 * its own, only while someone follows, reading whole entries (each holds
 * the facts of one script call), and hands each batch to the followers that
 * are live, filtered by their cursor. A follower that starts behind the
 * loop catches up with pages of read-facts first (which resume in the
 * middle of an entry), and joins the loop (in the same turn of the event
 * loop as its last page, so no batch falls between) once its cursor has
 * reached the loop's; facts it read both ways are filtered out by its
 * cursor. Failed reads (Redis restarting) are tried again from the last
 * entry read, so nothing is missed or repeated.
 */
export class FactFollower {
  private readonly followers = new Set<Follower>();
  private connection: Redis | Cluster | undefined;
  /** The cursor of the last fact the loop has read (every fact up to it is read); undefined while the loop is not running. */
  private livePosition: string | undefined;
  /** The id of the last stream entry the loop has read (of facts or not): where its next XREAD starts. */
  private liveEntryId = '';
  /** Resolves once the loop knows its position. */
  private started = new Latch();
  private isLooping = false;
  private isClosed = false;

  constructor(private readonly options: FactFollowerOptions) {}

  /**
   * Follows the log after `after` (after its newest fact when absent, read
   * before this resolves: facts recorded later are never missed).
   */
  async follow(after: string | undefined, listener: (facts: RecordedFact[]) => void): Promise<() => void> {
    if (this.isClosed) throw closed();
    const cursor = after ?? (await this.options.read(undefined, 0)).newest;
    if (this.isClosed) throw closed();
    const follower: Follower = { cursor, listener, isLive: false, isStopped: false };
    this.followers.add(follower);
    this.startLoop();
    void this.catchUp(follower);
    return () => {
      follower.isStopped = true;
      this.followers.delete(follower);
    };
  }

  close(): void {
    this.isClosed = true;
    this.followers.clear();
    this.connection?.disconnect();
  }

  /** Pages through the log from the follower's cursor until it reaches the loop's position. */
  private async catchUp(follower: Follower): Promise<void> {
    let failures = 0;
    while (!follower.isStopped && !this.isClosed) {
      let page: FactLogPage;
      try {
        page = await this.options.read(follower.cursor, this.options.pageSize);
        failures = 0;
      } catch {
        await pause(failures++);
        continue;
      }
      if (follower.isStopped) return;
      deliver(follower, page.facts);
      // Every fact up to the newest was in the page: nothing between them is still to read.
      if (page.isComplete && compareCursors(page.newest, follower.cursor) > 0) follower.cursor = page.newest;
      if (compareCursors(follower.cursor, page.newest) < 0) continue;
      await this.started.opened;
      if (follower.isStopped) return;
      // The loop may have read past this page meanwhile: those facts come from the next page.
      if (this.livePosition !== undefined && compareCursors(follower.cursor, this.livePosition) >= 0) {
        follower.isLive = true;
        return;
      }
    }
  }

  private startLoop(): void {
    if (this.isLooping) return;
    this.isLooping = true;
    void this.loop();
  }

  private async loop(): Promise<void> {
    let failures = 0;
    try {
      while (this.followers.size > 0 && !this.isClosed) {
        try {
          if (this.livePosition === undefined) {
            this.livePosition = (await this.options.read(undefined, 0)).newest;
            // Entries start at their first fact's position: those after the newest fact start after it.
            this.liveEntryId = `${this.livePosition}-${MAX_ENTRY_SEQUENCE}`;
            this.started.open();
          }
          const batch = await this.readLive(this.liveEntryId);
          failures = 0;
          if (batch.lastId === undefined) continue;
          this.liveEntryId = batch.lastId;
          const newest = batch.facts.at(-1)?.cursor;
          if (newest !== undefined) this.livePosition = newest;
          for (const follower of this.followers) if (follower.isLive) deliver(follower, batch.facts);
        } catch {
          if (this.isClosed) break;
          await pause(failures++);
        }
      }
    } finally {
      // Nobody follows: the next follower starts the loop from the log's newest fact again.
      this.isLooping = false;
      this.livePosition = undefined;
      this.started = new Latch();
    }
  }

  /** The entries after the entry `entryId`, waiting up to blockMs for one (none when it times out). */
  private async readLive(entryId: string): Promise<FactEntries> {
    // The loop may be past its check when the store closes (a read was in flight): a connection opened after
    // close() would never be closed, and would keep reconnecting, and the process alive, once Redis is gone.
    if (this.isClosed) throw closed();
    this.connection ??= this.options.open();
    const { blockMs, pageSize, key } = this.options;
    const reply = await this.connection.call('xread', ['BLOCK', blockMs, 'COUNT', pageSize, 'STREAMS', key, entryId]);
    if (reply === null) return { facts: [] };
    const [stream] = readArray(reply, 'xread');
    const [, entries] = readArray(stream, 'xread stream');
    return decodeFactEntries(entries);
  }
}

function closed(): Error {
  return backendUnavailable('Redis', new Error('the store is closed'));
}

/** The largest sequence of a stream id: "<position>-<this>" comes after every entry starting at `position`. */
const MAX_ENTRY_SEQUENCE = '18446744073709551615';

/** Hands the follower the facts after its cursor, and moves its cursor past them. */
function deliver(follower: Follower, facts: readonly RecordedFact[]): void {
  const fresh = facts.filter((recorded) => compareCursors(recorded.cursor, follower.cursor) > 0);
  if (fresh.length === 0) return;
  follower.cursor = fresh.at(-1)!.cursor;
  try {
    follower.listener(fresh);
  } catch {
    // A listener's failure is its own: the others, and the loop, go on.
  }
}

/** Waits before trying a failed read again: 100 ms, doubling up to 2 s. */
function pause(failures: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** Math.min(failures, 5))).unref());
}

/** A promise opened once, from outside. */
class Latch {
  readonly opened: Promise<void>;
  open: () => void = () => {};

  constructor() {
    this.opened = new Promise((resolve) => {
      this.open = resolve;
    });
  }
}
