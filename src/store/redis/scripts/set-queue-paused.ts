import { factText } from '../fact-codec';
import type { PauseParams } from '../../job-store';
import { readInteger } from '../reply';
import { arg, declareScript } from '../script';

/** Pauses or resumes a queue; says whether that changed anything (lua/set-queue-paused.lua). */
export const setQueuePausedScript = declareScript({
  name: 'set-queue-paused',
  encode: (params: PauseParams) => [
    arg.int(params.now, 'now'),
    arg.id(params.queue, 'queue'),
    arg.flag(params.paused),
    arg.text(factText(params.actor ?? ''), 'actor'),
  ],
  decode: (reply): { changed: boolean } => ({ changed: readInteger(reply, 'pause changed') === 1 }),
});
