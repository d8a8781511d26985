/**
 * A component fetched on first use: its module is a separate hashed chunk (console/build.mjs splits
 * at each `import()`), so what few sessions open (the terminal's xterm.js, the YAML parser) is not
 * part of the first load. The chunk is a file from the page's origin, as the CSP requires.
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** `load` resolves to the component; it runs once, on the first render, and its answer is kept. */
export function lazyComponent<P extends object>(what: string, load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: Promise<ComponentType<P>> | undefined;
  let component: ComponentType<P> | undefined;
  return function Lazy(props: P) {
    const [, setReady] = useState(false);
    const [error, setError] = useState<string | undefined>(undefined);
    useEffect(() => {
      if (component) return undefined;
      let live = true;
      loaded ??= load().then((c) => (component = c));
      loaded.then(
        () => live && setReady(true),
        (err: unknown) => {
          // A failed fetch (the server restarted with a new build, the network dropped) may work next time.
          loaded = undefined;
          if (live) setError(`could not load the ${what}: ${(err as Error).message}`);
        },
      );
      return () => void (live = false);
    }, []);
    if (component) {
      const C = component;
      return <C {...props} />;
    }
    return error ? (
      <p role="alert" class="error">
        {error}
      </p>
    ) : (
      <p class="hint" role="status">
        Loading the {what}…
      </p>
    );
  };
}
