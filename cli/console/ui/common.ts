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

/** Entries a long timeline renders at first, and adds per "Show older". */
export const TIMELINE_PAGE = 50;

/**
 * How many of a timeline's entries to render (newest first): a page, then a page more per click, so a history
 * of thousands keeps the page fast (the DOM holds what was asked for); back to one page for another list.
 */
export function useShownCount(key: string): [number, () => void] {
  const [shown, setShown] = useState(TIMELINE_PAGE);
  useEffect(() => setShown(TIMELINE_PAGE), [key]);
  return [shown, () => setShown((n) => n + TIMELINE_PAGE)];
}

/** The button under a cut timeline; nothing when every entry is shown. */
export const showOlder = (hidden: number, more: () => void) =>
  hidden > 0 ? html`<button type="button" class="show-older" onClick=${more}>Show ${Math.min(hidden, TIMELINE_PAGE)} older (${hidden} not shown yet)</button>` : '';

export type Tone = 'good' | 'bad' | 'warn' | 'neutral';

export const badge = (text: string, tone: Tone, title?: string) => html`<span class=${`badge ${tone}`} title=${title}>${text}</span>`;

export const refusedBox = (title: string, code: number, message: string) =>
  html`<div class="refused" role="alert"><strong>${title}: not available to you (${code})</strong><p>${message}</p></div>`;

export const errorBox = (message: string) => html`<div class="refused" role="alert"><strong>Error</strong><p>${message}</p></div>`;

export const time = (iso: string) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(11, 23)}Z`;
};
