import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import type {
  CancelWorkflowRequest,
  CreateWorkflowRequest,
  GetWorkflowRequest,
  WorkflowServiceImplementation,
} from '../../../gen/ojs/server/v1/workflow_service';
import { principalOf } from './auth-context';
import { niceGrpcRequestMetadata } from './request-metadata';
import { traceContextOf } from './trace-metadata';
import { toProtoWorkflow, toWorkflowDefinition } from './workflow-mapping';

/** WorkflowService handlers: chains, groups and batches (ojs-workflows 11). */
export class WorkflowServiceHandlers implements WorkflowServiceImplementation {
  constructor(private readonly app: Application) {}

  async createWorkflow(request: CreateWorkflowRequest, context: CallContext) {
    const definition = toWorkflowDefinition(request.definition);
    return {
      workflow: toProtoWorkflow(
        await this.app.workflows.create(principalOf(context), definition, traceContextOf(niceGrpcRequestMetadata(context.metadata))),
      ),
    };
  }

  async getWorkflow(request: GetWorkflowRequest, context: CallContext) {
    return { workflow: toProtoWorkflow(await this.app.workflows.get(principalOf(context), request.workflowId)) };
  }

  async cancelWorkflow(request: CancelWorkflowRequest, context: CallContext) {
    return { workflow: toProtoWorkflow(await this.app.workflows.cancel(principalOf(context), request.workflowId)) };
  }
}
