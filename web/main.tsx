import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ApiSession } from '../src/transport/http/api-types';
import { ApiError, get, storeToken, storedToken } from './api';
import { DeadLetterPage } from './pages/dead-letter';
import { JobPage } from './pages/job';
import { JobsPage } from './pages/jobs';
import { OverviewPage } from './pages/overview';
import { QueuesPage } from './pages/queues';
import { WorkersPage } from './pages/workers';
import { WorkflowPage } from './pages/workflow';

const PAGES = [
  { path: '', title: 'Overview' },
  { path: 'queues', title: 'Queues' },
  { path: 'jobs', title: 'Jobs' },
  { path: 'dead-letter', title: 'Dead letter' },
  { path: 'workers', title: 'Workers' },
] as const;

interface Route {
  path: string[];
  search: string;
}

function readRoute(): Route {
  const [path = '', search = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { path: path.split('/').map(decodeURIComponent), search };
}

/** The page named by the URL's hash (#/workers, #/jobs/<id>, #/jobs?queue=q, #/workflows/<id>): the server serves one document. */
function useRoute(): Route {
  const [route, setRoute] = useState(readRoute);
  useEffect(() => {
    const changed = (): void => setRoute(readRoute());
    addEventListener('hashchange', changed);
    // The hash may have changed between the first render and this effect, with nobody listening yet.
    changed();
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

type SessionState = { kind: 'loading' } | { kind: 'signed-in'; session: ApiSession } | { kind: 'sign-in'; problem?: string };

function App() {
  const [state, setState] = useState<SessionState>({ kind: 'loading' });
  const signIn = (): void => {
    get<ApiSession>('session').then(
      (session) => setState({ kind: 'signed-in', session }),
      (error: unknown) => {
        if (error instanceof ApiError && error.status === 401) {
          setState({ kind: 'sign-in', ...(storedToken() === null ? {} : { problem: 'That token is not known.' }) });
        } else if (error instanceof ApiError && error.status === 403) {
          setState({ kind: 'sign-in', problem: 'That token may not read the dashboard (it needs the reader, operator or admin role).' });
        } else setState({ kind: 'sign-in', problem: error instanceof Error ? error.message : String(error) });
      },
    );
  };
  useEffect(signIn, []);
  if (state.kind === 'loading') return <p class="loading">Loading…</p>;
  if (state.kind === 'sign-in') {
    return (
      <SignIn
        problem={state.problem}
        onToken={(token) => {
          storeToken(token);
          signIn();
        }}
      />
    );
  }
  return (
    <Shell
      session={state.session}
      onSignOut={() => {
        storeToken(null);
        setState({ kind: 'sign-in' });
      }}
    />
  );
}

function SignIn({ problem, onToken }: { problem: string | undefined; onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <main class="sign-in">
      <h1>OJS dashboard</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          onToken(token.trim());
        }}
      >
        <label for="token">Bearer token</label>
        <input
          id="token"
          type="password"
          autocomplete="current-password"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          required
        />
        <button type="submit">Sign in</button>
        {problem !== undefined && (
          <p role="alert" class="problem">
            {problem}
          </p>
        )}
        <p class="hint">The token is kept in this tab only (sessionStorage) and sent as an Authorization header.</p>
      </form>
    </main>
  );
}

function Shell({ session, onSignOut }: { session: ApiSession; onSignOut: () => void }) {
  const { path: route, search } = useRoute();
  const [page = '', id] = route;
  return (
    <>
      <header>
        <nav aria-label="Pages">
          <strong class="brand">OJS</strong>
          {PAGES.map(({ path, title }) => (
            <a href={`#/${path}`} aria-current={page === path ? 'page' : undefined}>
              {title}
            </a>
          ))}
        </nav>
        <div class="who">
          {session.isAuthRequired ? (
            <>
              <span>Signed in as {session.principal}</span>
              <button type="button" onClick={onSignOut}>
                Sign out
              </button>
            </>
          ) : (
            <span class="badge">authentication off</span>
          )}
        </div>
      </header>
      <main>
        {page === '' && <OverviewPage />}
        {page === 'queues' && <QueuesPage session={session} />}
        {page === 'jobs' && id === undefined && <JobsPage key={search} search={search} />}
        {page === 'jobs' && id !== undefined && <JobPage id={id} session={session} />}
        {page === 'dead-letter' && <DeadLetterPage session={session} />}
        {page === 'workers' && <WorkersPage session={session} />}
        {page === 'workflows' && id !== undefined && <WorkflowPage id={id} session={session} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
