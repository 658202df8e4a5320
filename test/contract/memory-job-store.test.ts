import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import { describeJobStoreContract } from './job-store-contract';
import { describeScheduleStoreContract } from './schedule-store-contract';
import { describeWorkflowStoreContract } from './workflow-store-contract';

describeJobStoreContract('memory', { create: async (options = {}) => new MemoryJobStore(options) });
describeScheduleStoreContract('memory', { create: async () => new MemoryJobStore() });
describeWorkflowStoreContract('memory', { create: async () => new MemoryJobStore() });
