import type { AppContext } from './app-context';
import { BulkChanges } from './bulk-changes';
import { EventFeed } from './event-feed';
import { JobCommands } from './job-commands';
import { JobListing } from './job-listing';
import { JobResults } from './job-results';
import { QueueAdmin } from './queue-admin';
import { CronerCalendar } from '../../lib/cron-calendar';
import { Recovery } from './recovery';
import { Schedules } from './schedules';
import { Settlement } from './settlement';
import { WorkerOwners } from './worker-owners';
import { WorkerRegistry } from './worker-registry';
import { WorkerStreams } from './worker-streams';
import { Workflows } from './workflows';

/** The use cases of the server, wired over one store. */
export interface Application {
  readonly context: AppContext;
  readonly jobs: JobCommands;
  readonly settlement: Settlement;
  readonly workers: WorkerRegistry;
  /** The owners of live workers this replica remembers; stopped with the server. */
  readonly owners: WorkerOwners;
  readonly recovery: Recovery;
  readonly streams: WorkerStreams;
  readonly events: EventFeed;
  readonly listing: JobListing;
  readonly bulk: BulkChanges;
  readonly queues: QueueAdmin;
  readonly results: JobResults;
  readonly schedules: Schedules;
  readonly workflows: Workflows;
}

export function createApplication(context: AppContext): Application {
  const recovery = new Recovery(context);
  const owners = new WorkerOwners(context.store);
  return {
    context,
    jobs: new JobCommands(context),
    settlement: new Settlement(context, owners),
    workers: new WorkerRegistry(context, recovery, owners),
    owners,
    recovery,
    streams: new WorkerStreams(context),
    events: new EventFeed(context),
    listing: new JobListing(context),
    bulk: new BulkChanges(context),
    queues: new QueueAdmin(context),
    results: new JobResults(context),
    schedules: new Schedules(context, new CronerCalendar()),
    workflows: new Workflows(context),
  };
}
