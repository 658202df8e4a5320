import { createFileRegistry, fromBinary, type DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import type { TsProtoServiceDefinition } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../../gen/ojs/server/v1/operator_service';
import { ScheduleServiceDefinition } from '../../gen/ojs/server/v1/schedule_service';
import { WorkerServiceDefinition } from '../../gen/ojs/server/v1/worker_service';
import { WorkflowServiceDefinition } from '../../gen/ojs/server/v1/workflow_service';
import { loadDescriptorSet } from '../../src/descriptor-set';

/** One RPC the fuzzer calls. */
export interface FuzzedMethod {
  /** "/package.Service/Method" */
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  /** The request message's descriptor, from the descriptor set buf builds from proto/. */
  request: DescMessage;
}

/** The services the server serves (reflection aside): their definitions say which methods exist. */
const SERVICES: readonly TsProtoServiceDefinition[] = [
  WorkerServiceDefinition,
  JobServiceDefinition,
  OperatorServiceDefinition,
  ScheduleServiceDefinition,
  WorkflowServiceDefinition,
  HealthDefinition,
];

/**
 * Every method of every served service, taken from the generated service
 * definitions, so that an RPC added to the contract is fuzzed without a
 * change here. Request shapes come from the descriptor set.
 */
export function fuzzedMethods(): FuzzedMethod[] {
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, loadDescriptorSet()));
  return SERVICES.flatMap((service) =>
    Object.values(service.methods).map((method) => {
      const described = registry.getService(service.fullName)?.methods.find((m) => m.name === method.name);
      if (described === undefined) throw new Error(`${service.fullName}/${method.name} is not in the descriptor set`);
      return {
        path: `/${service.fullName}/${method.name}`,
        requestStream: method.requestStream,
        responseStream: method.responseStream,
        request: described.input,
      };
    }),
  );
}
