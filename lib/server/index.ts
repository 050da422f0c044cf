// Public surface of the shared HTTP server bootstrap (see create-server.ts for what every server gets).
export * from './create-server.ts';
export * from './shutdown.ts';
