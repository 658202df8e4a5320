import { NO_NODE, type ResultPiece, type WorkflowPlan } from './workflow-plan';

/**
 * Assembling a node's parent_results (ojs-workflows section 7) from the
 * results its template names, by concatenating their stored JSON texts: a
 * store (a Lua script) does the same without parsing any of them.
 */

/** A result as a store keeps it: its JSON text, and its size in the measure of json.ts (what the result limit counts). */
export interface StoredResult {
  json: string;
  bytes: number;
}

/** The template of node `index`, its chain of extended templates flattened, as pieces. */
export function parentResultsPieces(plan: WorkflowPlan, index: number): ResultPiece[] {
  const segments: ResultPiece[][] = [];
  for (let template = plan.nodes[index]?.parentResults ?? NO_NODE; template !== NO_NODE;) {
    const { pieces, extends: base } = plan.templates[template] ?? { pieces: [], extends: NO_NODE };
    segments.unshift(pieces);
    template = base;
  }
  return segments.flatMap((pieces, i) => (i === 0 ? pieces : [',', ...pieces]));
}

/** The nodes whose results node `index` receives, in template order: what a store must read to assemble them. */
export function parentResultSources(plan: WorkflowPlan, index: number): number[] {
  return parentResultsPieces(plan, index).filter((piece) => typeof piece === 'number');
}

/**
 * The parent_results JSON of node `index`. A node without a result (it
 * failed, was cancelled or not triggered) is `null`. Results are inlined
 * while their sizes add up to at most `maxInlineBytes`, the nearest first
 * (the last entries: the preceding step, which section 7.2 requires, comes
 * before the earlier ones it recommends); a result that does not fit is
 * replaced by a stand-in naming the step to read it from with GetWorkflow
 * and its size (section 7.5's reference in place of a large value):
 * `{"result_omitted":true,"step":"1.0","result_size_bytes":2097152}`.
 * Keys, nulls and stand-ins are not counted; the plan bounds them.
 */
export function assembleParentResults(
  plan: WorkflowPlan,
  index: number,
  resultOf: (node: number) => StoredResult | undefined,
  maxInlineBytes = Number.POSITIVE_INFINITY,
): string {
  const pieces = parentResultsPieces(plan, index);
  const texts = new Map<number, string>();
  let inlinedBytes = 0;
  for (let i = pieces.length - 1; i >= 0; i--) {
    const node = pieces[i];
    if (typeof node !== 'number') continue;
    const result = resultOf(node);
    if (result === undefined) {
      texts.set(node, 'null');
    } else if (inlinedBytes + result.bytes <= maxInlineBytes) {
      inlinedBytes += result.bytes;
      texts.set(node, result.json);
    } else {
      texts.set(node, `{"result_omitted":true,"step":${JSON.stringify(plan.nodes[node]?.key ?? '')},"result_size_bytes":${result.bytes}}`);
    }
  }
  return `{${pieces.map((piece) => (typeof piece === 'number' ? texts.get(piece) : piece)).join('')}}`;
}
