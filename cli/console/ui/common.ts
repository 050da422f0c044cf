// Pieces every view uses: a polling loader (live pages refresh themselves), status badges, and a message
// box for what the caller may not see.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data?: T;
  error?: string;
}

/** Loads now and again every `everyMs` (0: once) while the view is shown; keeps the last good answer on an error. */
export function usePoll<T>(load: () => Promise<T>, everyMs: number, key: string): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({});
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setState({});
    const tick = async () => {
      try {
        const data = await load();
        if (!stopped) setState({ data });
      } catch (error) {
        if (!stopped) setState((s) => ({ ...s, error: (error as Error).message }));
      }
      if (!stopped && everyMs > 0) timer = setTimeout(() => void tick(), everyMs);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key]);
  return state;
}

export type Tone = 'good' | 'bad' | 'warn' | 'neutral';

export const badge = (text: string, tone: Tone, title?: string) => html`<span class=${`badge ${tone}`} title=${title}>${text}</span>`;

export const refusedBox = (title: string, code: number, message: string) =>
  html`<div class="refused" role="alert"><strong>${title}: not available to you (${code})</strong><p>${message}</p></div>`;

export const errorBox = (message: string) => html`<div class="refused" role="alert"><strong>Error</strong><p>${message}</p></div>`;

export const time = (iso: string) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(11, 23)}Z`;
};
