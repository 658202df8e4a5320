import { useEffect, useRef, useState } from 'preact/hooks';
import { followEvents } from './api';
import type { ApiEvent } from '../src/transport/http/api-types';

export interface Live<T> {
  data?: T;
  error?: string;
  /** Loads again now (after an action). */
  reload(): void;
}

/** Shortest time between two reloads caused by events: a burst of events costs one reload. */
const RELOAD_GAP_MS = 250;

/**
 * Data loaded from the API and loaded again whenever the event stream
 * (filtered by `events`, then by `isRelevant` when given) tells that
 * something changed: the numbers come from the server's own rules, the
 * events only say when to ask again. `isRelevant` is for what the stream's
 * filters cannot say (the jobs of a workflow may be more than a filter
 * lists); the latest one given is used.
 */
export function useLive<T>(
  load: () => Promise<T>,
  events: Record<string, string> | undefined,
  deps: readonly unknown[],
  isRelevant?: (event: ApiEvent) => boolean,
): Live<T> {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const reloadRef = useRef<() => void>(() => undefined);
  const relevantRef = useRef(isRelevant);
  relevantRef.current = isRelevant;
  useEffect(() => {
    const abort = new AbortController();
    let isLoading = false;
    let isAgain = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = (): void => {
      if (isLoading) {
        isAgain = true;
        return;
      }
      isLoading = true;
      load()
        .then(
          (data) => !abort.signal.aborted && setState({ data }),
          (error: unknown) =>
            !abort.signal.aborted && setState((old) => ({ ...old, error: error instanceof Error ? error.message : String(error) })),
        )
        .finally(() => {
          isLoading = false;
          if (isAgain) {
            isAgain = false;
            schedule();
          }
        });
    };
    const schedule = (): void => {
      if (timer === undefined)
        timer = setTimeout(() => {
          timer = undefined;
          run();
        }, RELOAD_GAP_MS);
    };
    reloadRef.current = run;
    run();
    const onEvent = (event: ApiEvent): void => {
      if (relevantRef.current?.(event) ?? true) schedule();
    };
    if (events !== undefined) void followEvents(events, onEvent, abort.signal);
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
    // oxlint-disable-next-line react-hooks/exhaustive-deps -- the caller names what the load depends on
  }, deps);
  return { ...state, reload: () => reloadRef.current() };
}

/** The current time, ticking every second (for ages that grow between reloads). */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}
