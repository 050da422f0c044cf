// The router's second public face: its history API server (`--history-api-port`), apart from router/index.ts so
// that a router started without it never loads the HTTPS framework the API is served with (fastify).
export { historySource, startHistoryApi, type HistoryApi } from './history/history-api.ts';
export { podPeerResolver } from './history/peer-forward.ts';
