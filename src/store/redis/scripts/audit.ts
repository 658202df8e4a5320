import { readStrings } from '../reply';
import { arg, declareScript } from '../script';

/** Every broken invariant of the deployment's data, as sentences (lua/audit.lua). */
export const auditScript = declareScript({
  name: 'audit',
  isReadOnly: true,
  encode: (params: { scanPattern: string; keyBudget: number; maxProblems: number }) => [
    arg.id(params.scanPattern, 'scan pattern'),
    arg.int(params.keyBudget, 'key budget'),
    arg.int(params.maxProblems, 'most problems'),
  ],
  decode: (reply): string[] => readStrings(reply, 'audit'),
});
