import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import { pageRequest } from '../../domain/paging';
import { scheduleNameProblem } from '../../domain/schedule';
import type {
  DeleteScheduleRequest,
  GetScheduleRequest,
  ListSchedulesRequest,
  PauseScheduleRequest,
  RegisterScheduleRequest,
  ResumeScheduleRequest,
  ScheduleServiceImplementation,
} from '../../../gen/ojs/server/v1/schedule_service';
import { principalOf } from './auth-context';
import { toProtoSchedule, toScheduleInput } from './schedule-mapping';

/** ScheduleService handlers: cron schedules (ojs-cron 8). */
export class ScheduleServiceHandlers implements ScheduleServiceImplementation {
  constructor(private readonly app: Application) {}

  async registerSchedule(request: RegisterScheduleRequest, context: CallContext) {
    const { schedule, created } = await this.app.schedules.register(principalOf(context), toScheduleInput(request.schedule));
    return { schedule: toProtoSchedule(schedule), created };
  }

  async getSchedule(request: GetScheduleRequest, context: CallContext) {
    return { schedule: toProtoSchedule(await this.app.schedules.get(principalOf(context), request.name)) };
  }

  async listSchedules(request: ListSchedulesRequest, context: CallContext) {
    const page = await this.app.schedules.list(
      principalOf(context),
      pageRequest(request.pageSize, request.pageToken, scheduleNameProblem),
      request.paused,
    );
    return { schedules: page.items.map(toProtoSchedule), nextPageToken: page.nextAfter ?? '' };
  }

  async deleteSchedule(request: DeleteScheduleRequest, context: CallContext) {
    await this.app.schedules.remove(principalOf(context), request.name);
    return {};
  }

  async pauseSchedule(request: PauseScheduleRequest, context: CallContext) {
    return { schedule: toProtoSchedule(await this.app.schedules.setPaused(principalOf(context), request.name, true)) };
  }

  async resumeSchedule(request: ResumeScheduleRequest, context: CallContext) {
    return { schedule: toProtoSchedule(await this.app.schedules.setPaused(principalOf(context), request.name, false)) };
  }
}
