import { styleText } from 'node:util';
import Table from 'cli-table3';

/** Styles the human output uses; plain text when colour is off. */
export type Style = 'bold' | 'dim' | 'green' | 'yellow' | 'red' | 'cyan';

/** No borders, two spaces between columns: tables that read like `kubectl get` and paste well. */
const PLAIN_TABLE_CHARS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};
const PLAIN_TABLE_STYLE = { head: [], border: [], 'padding-left': 0, 'padding-right': 0 };

/**
 * Where a command writes: aligned tables and sentences for people, or one
 * JSON object per line for scripts (`--json`). Colour only when stdout is a
 * terminal and NO_COLOR is not set (https://no-color.org).
 */
export class Output {
  readonly isColour: boolean;

  constructor(
    readonly isJson: boolean,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.isColour = !isJson && stdout.isTTY && (env['NO_COLOR'] ?? '') === '';
  }

  /** One JSON value on a line of its own. */
  json(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  line(text: string): void {
    this.stdout.write(`${text}\n`);
  }

  /** A note about the run rather than its result (e.g. where to resume): on stderr, so stdout stays data. */
  note(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  paint(style: Style, text: string): string {
    return this.isColour ? styleText(style, text) : text;
  }

  /** An aligned table with a header row; nothing but the header when there are no rows. */
  table(head: string[], rows: string[][]): void {
    const table = new Table({
      head: head.map((title) => this.paint('bold', title)),
      chars: PLAIN_TABLE_CHARS,
      style: PLAIN_TABLE_STYLE,
    });
    table.push(...rows);
    this.line(rendered(table));
  }

  /** One row of fixed column widths (cells cut to fit), for a stream whose rows cannot be measured in advance. */
  row(cells: string[], widths: number[]): void {
    const table = new Table({ colWidths: widths, chars: PLAIN_TABLE_CHARS, style: PLAIN_TABLE_STYLE });
    table.push(cells);
    this.line(rendered(table));
  }

  /** A two-column table of names and values, for one object (`jobs get`). */
  fields(entries: [string, string][]): void {
    const table = new Table({ chars: PLAIN_TABLE_CHARS, style: PLAIN_TABLE_STYLE });
    table.push(...entries.map(([name, value]) => [this.paint('bold', name), value]));
    this.line(rendered(table));
  }
}

/** The table's text; cli-table3 pads the last column too, and trailing spaces are noise in a terminal and in tests. */
function rendered(table: Table.Table): string {
  return table
    .toString()
    .split('\n')
    .map((row) => row.trimEnd())
    .join('\n');
}
