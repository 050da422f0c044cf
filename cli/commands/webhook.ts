// `kubeloop webhook`: runs the admission gateway until SIGTERM/SIGINT. With --dev it registers its hooks'
// webhook configurations at https://127.0.0.1:<port> (kubeloop dev) and deletes them again on SIGTERM/SIGINT.
import { startTracing } from '../../lib/observability/tracing.ts';
import { closeOnSignals } from '../../lib/server/shutdown.ts';
import { guardStartUp } from '../../lib/server/start-up-signals.ts';
import { readWebhookConfig, WEBHOOK_USAGE, startWebhook } from '../../webhooks/index.ts';
import { usageFailure } from '../command-args.ts';

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(WEBHOOK_USAGE);
    return 0;
  }
  let config: ReturnType<typeof readWebhookConfig>;
  try {
    config = readWebhookConfig(argv);
  } catch (error) {
    return usageFailure('webhook', error);
  }
  // The listeners answer probes before start-up has finished (the hooks are still being served). A signal in
  // that window would kill the process by default, leaving a dev hook configuration registered: it is held and
  // honoured by the usual shutdown as soon as start-up ends (seen in the images e2e under load).
  const startUp = guardStartUp('hold');
  const tracing = await startTracing(config.tracing, 'kubeloop-webhook');
  let webhook: Awaited<ReturnType<typeof startWebhook>>;
  try {
    webhook = await startWebhook(config);
  } catch (error) {
    startUp.failed();
    await tracing.shutdown();
    throw error;
  }
  // Closing the listener first; the informers and timers are unref'd or stopped with it. In dev mode the hook
  // configurations it registered are deleted too (bounded): left behind, they would point the API server at a
  // dead process and block admission where the hooks apply until someone deleted them by hand.
  closeOnSignals(webhook.server, {
    drainDelayMs: config.drainDelaySeconds * 1000,
    exit: (code) => {
      void webhook
        .stop({ unregister: config.dev })
        .then(() => tracing.shutdown())
        .finally(() => process.exit(code));
    },
  });
  startUp.started();
  return new Promise<number>(() => {});
}
