import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A collection on demand: --expose-gc set at run time gives new contexts a gc().
setFlagsFromString('--expose-gc');

/** Collects the whole heap now. */
export const collectGarbage = runInNewContext('gc') as () => void;
