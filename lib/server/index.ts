// Public surface of the shared HTTP server bootstrap. Typical use:
//   const server = createServer({ logger, bodyLimitBytes, ready: () => cacheSynced, https: { key, cert } });
//   server.app.post('/mutate', handler);            // add routes; /healthz, /readyz, /metrics are there already
//   const url = await listen(server.app, { port }); closeOnSignals(server, { drainDelayMs });
//   setServingCertificate(server.app, renewed);     // rotate an HTTPS certificate without a restart
export * from './create-server.ts';
export * from './shutdown.ts';
