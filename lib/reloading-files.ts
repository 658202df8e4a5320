import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

export interface ReloadingFilesOptions<T> {
  /** The files, read together; `parse` gets their contents in this order. */
  paths: readonly string[];
  /** Turns the files' contents into a value, or throws when they are not usable. */
  parse: (contents: readonly Buffer[]) => T;
  /** How often the files are read again to see whether they changed. */
  intervalMs: number;
  /** A changed set of files that parsed: the value is current from now on. */
  onReload?: (value: T) => void;
  /** A changed set of files that could not be read or parsed: the previous value stays current. */
  onError: (error: unknown) => void;
}

/**
 * A value made from files that are replaced while the process runs (a
 * certificate rotated by cert-manager, a Kubernetes Secret updated). The
 * files are polled rather than watched: Secrets are swapped through symlinks,
 * which inotify watches on the files themselves miss. A set that does not
 * parse (a half-written rotation, a typo) keeps the last good value until
 * the files change again.
 */
export class ReloadingFiles<T> {
  private current: T;
  private lastContents: readonly Buffer[];
  private timer: NodeJS.Timeout | undefined;
  private isClosed = false;

  /** Reads and parses the files now; throws (naming the files) when they cannot be used at start-up. */
  constructor(private readonly options: ReloadingFilesOptions<T>) {
    this.lastContents = options.paths.map((path) => readFileSync(path));
    this.current = options.parse(this.lastContents);
    this.schedule();
  }

  /** The value of the last files that parsed. */
  get value(): T {
    return this.current;
  }

  /** Stops polling. */
  close(): void {
    this.isClosed = true;
    clearTimeout(this.timer);
  }

  /** Reads the files once and, when they changed and parse, makes them current. */
  async pollOnce(): Promise<void> {
    let contents: Buffer[];
    try {
      contents = await Promise.all(this.options.paths.map((path) => readFile(path)));
    } catch (error) {
      this.options.onError(error);
      return;
    }
    if (this.isClosed || contents.every((content, i) => content.equals(this.lastContents[i]!))) return;
    this.lastContents = contents;
    try {
      this.current = this.options.parse(contents);
    } catch (error) {
      this.options.onError(error);
      return;
    }
    this.options.onReload?.(this.current);
  }

  /** A setTimeout chain, so that a slow read never overlaps the next; unref'd, so polling never keeps a process alive. */
  private schedule(): void {
    if (this.isClosed) return;
    this.timer = setTimeout(() => {
      void this.pollOnce()
        .catch(this.options.onError)
        .finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }
}
