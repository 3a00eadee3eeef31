// The HTTP edge: the Hono application serving the NGSI-LD API.
export { createApp } from './app.js';
export type { App, AppDeps, HttpConfig } from './app-env.js';
export { listenHttp, type HttpListener } from './listen.js';
