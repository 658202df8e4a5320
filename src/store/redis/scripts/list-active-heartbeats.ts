import { readArray, readInteger, readString } from '../reply';
import { arg, declareScript } from '../script';

/** When active jobs last showed signs of life (lua/list-active-heartbeats.lua). */
export const listActiveHeartbeatsScript = declareScript({
  name: 'list-active-heartbeats',
  isReadOnly: true,
  encode: (params: { limit: number }) => [arg.int(params.limit, 'limit')],
  decode: (reply): { queue: string; renewedAt: number }[] =>
    readArray(reply, 'heartbeats').map((entry) => {
      const [queue, renewedAt] = readArray(entry, 'heartbeat');
      return { queue: readString(queue, 'queue'), renewedAt: readInteger(renewedAt, 'renewed at') };
    }),
});
