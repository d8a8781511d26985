/**
 * A terminal into a container: xterm.js over a WebSocket exec (exec-channel.ts) opened as the
 * signed-in user (the token rides as a subprotocol, api.ts), sized to its panel and resized with it.
 */
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { EXEC_PROTOCOLS, ExecSession, execPath, type SocketLike } from './exec-channel.js';
import type { Pod } from './k8s.js';

/**
 * Opens `term` in `el` with its generated CSS (theme colours, cell sizes) in constructed
 * stylesheets. xterm 6's DOM renderer writes that CSS into `<style>` elements, which the console's
 * Content-Security-Policy (`style-src 'self'`) refuses; a constructed sheet is CSSOM, which the
 * policy allows. Only the `<style>` elements xterm creates while opening (all it ever makes) are
 * redirected; the document's createElement is itself again before this returns. The returned
 * function drops the sheets.
 */
function openUnderCsp(term: Terminal, el: HTMLElement): () => void {
  const doc = el.ownerDocument;
  const sheets = new Set<CSSStyleSheet>();
  const drop = (sheet: CSSStyleSheet): void => {
    sheets.delete(sheet);
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
  };
  const create = doc.createElement.bind(doc);
  const styleless = (tag: string, options?: ElementCreationOptions): HTMLElement => {
    if (tag.toLowerCase() !== 'style') return create(tag, options);
    // An inert stand-in: a <template> renders nothing; its text goes to the sheet.
    const holder = create('template');
    const sheet = new CSSStyleSheet();
    let text = '';
    sheets.add(sheet);
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
    Object.defineProperty(holder, 'textContent', {
      get: () => text,
      set: (v: string | null) => {
        text = v ?? '';
        sheet.replaceSync(text);
      },
    });
    holder.remove = () => {
      Element.prototype.remove.call(holder);
      drop(sheet);
    };
    return holder;
  };
  Object.defineProperty(doc, 'createElement', { value: styleless, configurable: true, writable: true });
  try {
    term.open(el);
  } finally {
    delete (doc as { createElement?: unknown }).createElement;
  }
  return () => [...sheets].forEach(drop);
}

/** The terminal panel for `pod`'s first container (or `container`). */
export function TerminalPanel(props: { api: Api; pod: Pod; onClose(): void }) {
  const { namespace = 'default', name = '' } = props.pod.metadata;
  const containers = props.pod.spec?.containers?.map((c) => c.name) ?? [];
  const [container, setContainer] = useState(containers[0] ?? '');
  const [status, setStatus] = useState('connecting…');
  const [ended, setEnded] = useState<{ success: boolean; message: string } | undefined>(undefined);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || !container) return;
    setEnded(undefined);
    setStatus('connecting…');
    const term = new Terminal({ cursorBlink: true, fontSize: 14, fontFamily: 'ui-monospace, monospace', scrollback: 2000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    const dropSheets = openUnderCsp(term, el);
    const socket = props.api.webSocket(execPath(namespace, name, container), EXEC_PROTOCOLS);
    const session = new ExecSession(socket as unknown as SocketLike, {
      output: (d) => term.write(d),
      exit: (e) => {
        setEnded(e);
        setStatus(e.success ? 'ended' : 'failed');
      },
    });
    socket.addEventListener('open', () => {
      setStatus(`connected (${socket.protocol})`);
      session.resize(term.cols, term.rows);
    });
    term.onData((d) => session.input(d));
    term.onResize(({ cols, rows }) => session.resize(cols, rows));
    // The panel's size decides the terminal's: refit (and so resize the tty) whenever it changes.
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(el);
    fit.fit();
    term.focus();
    return () => {
      observer.disconnect();
      session.close();
      try {
        term.dispose();
      } finally {
        dropSheets();
      }
    };
  }, [props.api, namespace, name, container]);
  return (
    <section aria-labelledby="terminal-title" id="terminal">
      <div class="panel-head">
        <h2 id="terminal-title">
          Terminal in {namespace}/{name}
        </h2>
        {containers.length > 1 && (
          <select aria-label="Container" value={container} onChange={(e) => setContainer((e.target as HTMLSelectElement).value)}>
            {containers.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        )}
        <span class="hint" id="terminal-status" role="status">
          {status}
        </span>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      {ended && !ended.success && (
        <p role="alert" class="error">
          {ended.message}
        </p>
      )}
      <div class="terminal-box" ref={box} aria-label={`Terminal of ${name}`} />
    </section>
  );
}
