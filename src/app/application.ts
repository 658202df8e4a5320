import type { AppContext } from './app-context';
import { BulkChanges } from './bulk-changes';
import { EventFeed } from './event-feed';
import { JobCommands } from './job-commands';
import { JobListing } from './job-listing';
import { JobResults } from './job-results';
import { QueueAdmin } from './queue-admin';
import { Recovery } from './recovery';
import { Settlement } from './settlement';
import { WorkerRegistry } from './worker-registry';
import { WorkerStreams } from './worker-streams';

/** The use cases of the server, wired over one store. */
export interface Application {
  readonly context: AppContext;
  readonly jobs: JobCommands;
  readonly settlement: Settlement;
  readonly workers: WorkerRegistry;
  readonly recovery: Recovery;
  readonly streams: WorkerStreams;
  readonly events: EventFeed;
  readonly listing: JobListing;
  readonly bulk: BulkChanges;
  readonly queues: QueueAdmin;
  readonly results: JobResults;
}

export function createApplication(context: AppContext): Application {
  const recovery = new Recovery(context);
  return {
    context,
    jobs: new JobCommands(context),
    settlement: new Settlement(context),
    workers: new WorkerRegistry(context, recovery),
    recovery,
    streams: new WorkerStreams(context),
    events: new EventFeed(context),
    listing: new JobListing(context),
    bulk: new BulkChanges(context),
    queues: new QueueAdmin(context),
    results: new JobResults(context),
  };
}
