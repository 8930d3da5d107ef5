#!/usr/bin/env node
// Docker HEALTHCHECK: exits 0 when the daemon answers GET /livez with 200 on HTTP_PORT, 1 otherwise.
// Liveness only: whether Redis and the store are reachable is /readyz's business.
import { get } from 'node:http';

const port = Number(process.env.HTTP_PORT || 9464);
const host = process.env.HEALTHCHECK_HOST || '127.0.0.1';
const timeoutMs = Number(process.env.HEALTHCHECK_TIMEOUT_MS || 4000);

const request = get({ host, port, path: '/livez', timeout: timeoutMs }, (response) => {
  response.resume();
  if (response.statusCode !== 200) console.error(`healthcheck: /livez answered ${response.statusCode}`);
  process.exit(response.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
request.on('error', (error) => {
  console.error(`healthcheck: http://${host}:${port}/livez: ${error.message}`);
  process.exit(1);
});
