import { compareCursors, cursorPosition, type RecordedFact } from '../../../domain/event-facts';
import { decodeFactEntries } from '../fact-codec';
import { readArray, readInteger, readString } from '../reply';
import { arg, declareScript } from '../script';

/** A page of the event log, with its bounds. */
export interface FactLogPage {
  /** The facts after the cursor asked for, oldest first, at most the limit asked for. */
  facts: RecordedFact[];
  /** The oldest fact's cursor; absent for an empty log. */
  oldest?: string;
  /** The cursor of the last fact the log numbered ("0" when none): where "from now" starts. */
  newest: string;
  /** Whether the page holds every fact up to `newest`: a reader has then read everything up to it. */
  isComplete: boolean;
}

/** Facts after a cursor, oldest first, with the log's bounds (lua/read-facts.lua). */
export const readFactsScript = declareScript({
  name: 'read-facts',
  isReadOnly: true,
  encode: (params: { after?: string; limit: number }) => [
    params.after === undefined ? '' : arg.int(cursorPosition(params.after), 'after'),
    arg.int(params.limit, 'limit'),
  ],
  decode(reply, { after, limit }): FactLogPage {
    const [oldest, newest, entries, isEnd] = readArray(reply, 'read-facts');
    const facts = decodeFactEntries(entries).facts.filter((recorded) => after === undefined || compareCursors(recorded.cursor, after) > 0);
    const page: FactLogPage = {
      facts: facts.slice(0, limit),
      newest: readString(newest, 'newest cursor'),
      isComplete: readInteger(isEnd, 'read-facts end') === 1 && facts.length <= limit,
    };
    const first = readString(oldest, 'oldest cursor');
    if (first !== '') page.oldest = first;
    return page;
  },
});
