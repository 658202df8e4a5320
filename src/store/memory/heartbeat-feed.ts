import type { HeartbeatNotice } from '../../domain/event-facts';

/**
 * Beats and lease extensions for live heartbeat watchers: never stored.
 * Notices are collected only while someone listens, and handed out when
 * the operation that made them has completed.
 */
export class HeartbeatFeed {
  private readonly listeners = new Set<(notice: HeartbeatNotice) => void>();
  private pending: HeartbeatNotice[] = [];

  get isFollowed(): boolean {
    return this.listeners.size > 0;
  }

  follow(listener: (notice: HeartbeatNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keeps `notice` for the listeners, if there are any (callers build notices only when `isFollowed`). */
  add(notice: HeartbeatNotice): void {
    if (this.isFollowed) this.pending.push(notice);
  }

  /** Hands the collected notices to every listener; returns whether there were any. */
  deliver(): boolean {
    const notices = this.pending;
    if (notices.length === 0) return false;
    this.pending = [];
    for (const notice of notices) for (const listener of this.listeners) listener(notice);
    return true;
  }

  unfollowAll(): void {
    this.listeners.clear();
    this.pending = [];
  }
}
