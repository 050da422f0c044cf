// The memory a kubeloop process retains: a full garbage collection through its inspector (the soak starts
// each process with --inspect on a loopback port), then the used JS heap plus external memory (Buffers and
// other backing stores). RSS alone cannot tell a leak from a heap V8 has grown and not yet given back.

interface InspectorTarget {
  webSocketDebuggerUrl?: string;
}

/** Sends inspector commands one after the other over one session; resolves with the last result. */
interface Command {
  method: string;
  params?: Record<string, unknown>;
}

async function inspectorSession(url: string, commands: Command[], timeoutMs: number): Promise<unknown> {
  const socket = new WebSocket(url);
  try {
    return await new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector ${url}: no answer in ${timeoutMs} ms`)), timeoutMs);
      let id = 0;
      const send = (): void => socket.send(JSON.stringify({ id: ++id, ...commands[id - 1] }));
      socket.addEventListener('open', send);
      socket.addEventListener('error', () => reject(new Error(`inspector ${url}: connection failed`)));
      socket.addEventListener('message', (event) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
        if (message.id !== id) return; // an event, not our answer
        if (message.error) return reject(new Error(`inspector ${commands[id - 1]?.method}: ${message.error.message}`));
        if (id < commands.length) return send();
        clearTimeout(timer);
        resolve(message.result);
      });
    });
  } finally {
    socket.close();
  }
}

const MEMORY_USAGE = 'JSON.stringify(process.memoryUsage())';

/** Used heap plus external bytes right after a full GC, or undefined when the process or its inspector is gone. */
export async function retainedHeapBytes(inspectPort: number, timeoutMs = 15_000): Promise<number | undefined> {
  try {
    const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`, { signal: AbortSignal.timeout(timeoutMs) })).json()) as InspectorTarget[];
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) return undefined;
    const evaluated = (await inspectorSession(url, [{ method: 'HeapProfiler.collectGarbage' }, { method: 'Runtime.evaluate', params: { expression: MEMORY_USAGE, returnByValue: true } }], timeoutMs)) as {
      result?: { value?: unknown };
    };
    const usage = JSON.parse(String(evaluated.result?.value)) as NodeJS.MemoryUsage;
    return usage.heapUsed + usage.external;
  } catch {
    return undefined;
  }
}
