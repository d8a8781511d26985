/**
 * The nodelet web console (docs/console.md): sign-in with a bearer token, then the cluster at a
 * glance and its operations, every call made as that user. The token lives in sessionStorage
 * (gone when the tab closes), never in a URL; sign-out forgets it.
 */
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApi, type Api } from './api.js';
import { Overview } from './overview.js';
// xterm's stylesheet is small and esbuild loads no CSS with a lazy chunk: it stays in the one app stylesheet.
import '@xterm/xterm/css/xterm.css';
import './style.css';

const TOKEN_KEY = 'nodelet-console-token';

interface Session {
  token: string;
  user: string;
}

/** Asks the server who the token's holder is (SelfSubjectReview): a bad token gets the server's 401 message. */
async function whoAmI(api: Api): Promise<string> {
  const review = (await api.send('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })) as {
    status?: { userInfo?: { username?: string } };
  };
  return review.status?.userInfo?.username ?? '(unknown)';
}

function SignIn(props: { onSignIn(s: Session): void; initialError?: string }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(props.initialError);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const t = token.trim();
    if (!t) return setError('Enter a bearer token.');
    setBusy(true);
    try {
      props.onSignIn({ token: t, user: await whoAmI(createApi(t)) });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>nodelet console</h1>
      <form onSubmit={(e) => void submit(e)} aria-describedby="signin-help">
        <label for="token">Bearer token</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck={false} value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} required />
        <p id="signin-help" class="hint">
          A user's token, or the admin kubeconfig's (<code>users[0].user.token</code>). The console calls the API as that user; RBAC decides what it shows. The token is kept for this tab only.
        </p>
        <button type="submit" disabled={busy}>Sign in</button>
        {error && (
          <p role="alert" class="error" id="signin-error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(() => {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return token ? { token, user: '' } : undefined;
  });
  const api = useMemo(() => (session ? createApi(session.token) : undefined), [session?.token]);
  const signOut = (): void => {
    sessionStorage.removeItem(TOKEN_KEY);
    setSession(undefined);
  };
  // A token restored from sessionStorage (a reload): ask again who holds it; refused, sign out.
  useEffect(() => {
    if (!session || session.user || !api) return;
    whoAmI(api).then((user) => setSession({ ...session, user }), signOut);
  }, [api, session?.user]);
  if (!session || !api) {
    return (
      <SignIn
        onSignIn={(s) => {
          sessionStorage.setItem(TOKEN_KEY, s.token);
          setSession(s);
        }}
      />
    );
  }
  return <Overview api={api} user={session.user} onSignOut={signOut} />;
}

render(<App />, document.getElementById('app')!);
