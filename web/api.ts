import type { ApiErrorBody, ApiEvent } from '../src/transport/http/api-types';

/**
 * The dashboard's calls to its server. The bearer token (when the server
 * has an auth file) is kept in sessionStorage, so it lasts as long as the
 * tab and is sent as an Authorization header on every call, the event
 * stream included: it never appears in a URL.
 */
const TOKEN_KEY = 'ojs-dashboard-token';

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** A refusal from the API: its HTTP status and OJS error code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = storedToken();
  return token === null ? extra : { ...extra, authorization: `Bearer ${token}` };
}

async function answer<T>(response: Response): Promise<T> {
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- the API answers refusals as ApiErrorBody (a proxy may not: hence the fallbacks)
    const error = (body as ApiErrorBody | undefined)?.error;
    throw new ApiError(response.status, error?.code ?? 'unavailable', error?.message ?? `HTTP ${response.status}`);
  }
  // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- the server answers the shapes of api-types.ts, shared with it
  return body as T;
}

export async function get<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
  const params = new URLSearchParams(
    Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
  const search = params.toString();
  return answer<T>(await fetch(`/api/${path}${search === '' ? '' : `?${search}`}`, { headers: headers() }));
}

export async function post<T>(path: string, body: unknown = {}): Promise<T> {
  return answer<T>(
    await fetch(`/api/${path}`, { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify(body) }),
  );
}

/**
 * Follows the server's event stream (server-sent events read with fetch, so
 * that the token travels in a header), calling `onEvent` for each event
 * until `signal` aborts. A dropped stream is opened again after a second,
 * resuming after the last event seen.
 */
export async function followEvents(query: Record<string, string>, onEvent: (event: ApiEvent) => void, signal: AbortSignal): Promise<void> {
  let lastId = '';
  while (!signal.aborted) {
    try {
      const response = await fetch(`/api/events?${new URLSearchParams(query).toString()}`, {
        headers: headers(lastId === '' ? {} : { 'last-event-id': lastId }),
        signal,
      });
      if (!response.ok || response.body === null) throw new Error(`event stream: HTTP ${response.status}`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const record = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = record
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n');
          if (data === '' || record.startsWith('event: error')) continue;
          // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- the server sends ApiEvent records (api-types.ts)
          const event = JSON.parse(data) as ApiEvent;
          lastId = event.id;
          onEvent(event);
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
