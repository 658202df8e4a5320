import { decodeFactEntries, type FactEntries } from '../fact-codec';
import { readArray, readString } from '../reply';
import { arg, declareScript } from '../script';

/** A page of the event log, with its oldest and newest cursors. */
export interface FactLogPage extends FactEntries {
  /** Absent for an empty log. */
  oldest?: string;
  /** The newest fact's cursor ("0-0" for an empty log): where "from now" starts. */
  newest: string;
}

/** Facts after a cursor, oldest first, with the log's bounds (lua/read-facts.lua). */
export const readFactsScript = declareScript({
  name: 'read-facts',
  encode: (params: { after?: string; limit: number }) => [
    params.after === undefined ? '' : arg.id(params.after, 'after'),
    arg.int(params.limit, 'limit'),
  ],
  decode(reply): FactLogPage {
    const [oldest, newest, entries] = readArray(reply, 'read-facts');
    const page: FactLogPage = { ...decodeFactEntries(entries), newest: readString(newest, 'newest cursor') };
    const first = readString(oldest, 'oldest cursor');
    if (first !== '') page.oldest = first;
    return page;
  },
});
