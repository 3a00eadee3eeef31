// The lockout of repeated failed MQTT logins around the authenticate hook: a CONNECT whose address
// or user name must wait is refused unheard (CONNACK server unavailable), and every refusal past
// the threshold is answered late, so a client guessing passwords gets one answer per wait.

import type { AuthenticateError, Client } from 'aedes';
import type { Socket } from 'node:net';
import type { Logger, LoginAttempt, LoginLimiter } from '../lib/index.js';
import { MqttWillRefusedError } from './errors.js';
import type { MqttAccessHooks } from './hooks.js';

/** CONNACK return codes of MQTT 3.1.1 (§3.2.2.3). */
const SERVER_UNAVAILABLE = 3;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

/** The peer address of a client: its WebSocket upgrade request's socket, else its TCP (or TLS) socket. */
function addressOf(client: Client): string | undefined {
  // NOTE: Aedes types `conn` as a plain stream; a TCP or TLS connection is a net.Socket.
  const address = client.req?.socket.remoteAddress ?? (client.conn as Partial<Socket>).remoteAddress;
  return typeof address === 'string' ? address : undefined;
}

function refusal(code: number): AuthenticateError {
  // NOTE: Aedes reads the CONNACK code from the error's returnCode.
  const err = new Error('server unavailable: too many failed logins') as AuthenticateError;
  err.returnCode = code;
  return err;
}

/** The authenticate hook with failed logins counted and, past their threshold, made to wait. */
export function limitConnects(authenticate: MqttAccessHooks['authenticate'], deps: { limiter: LoginLimiter; log: Logger }): MqttAccessHooks['authenticate'] {
  const { limiter, log } = deps;
  /**
   * Answers after `ms` (at most the limiter's longest answer delay), or as soon as the client's connection closes:
   * a client that gave up must not keep its connection's state alive until then (a flood of CONNECTs
   * that each give up at once would otherwise hold thousands of them).
   */
  const later = (client: Client, ms: number, answer: () => void): void => {
    // NOTE: Aedes types `conn` as a plain stream; every stream it is given (TCP, TLS, WebSocket) emits 'close'.
    const conn = client.conn as Partial<Pick<Socket, 'once' | 'off'>>;
    const fire = (): void => {
      clearTimeout(timer);
      conn.off?.('close', fire);
      answer();
    };
    const timer = setTimeout(fire, limiter.answerDelay(ms));
    timer.unref();
    conn.once?.('close', fire);
  };
  return (client, username, password, done) => {
    const login: LoginAttempt = { channel: 'mqtt', address: addressOf(client), name: username };
    const wait = limiter.begin(login);
    if (wait > 0) {
      log.info('mqtt client refused: too many failed logins', { clientId: client.id, user: username ?? null, address: login.address ?? null, retryAfterMs: wait });
      later(client, wait, () => done(refusal(SERVER_UNAVAILABLE), false));
      return;
    }
    authenticate(client, username, password, (error, success) => {
      const code = error?.returnCode;
      // Its credentials were right; only its will was not allowed.
      if (error instanceof MqttWillRefusedError) {
        limiter.succeeded(login);
      } else if (code === BAD_USERNAME_OR_PASSWORD || code === NOT_AUTHORIZED) {
        const delay = limiter.failed(login);
        if (delay > 0) {
          later(client, delay, () => done(error, success));
          return;
        }
      } else if (error === null && success === true) {
        limiter.succeeded(login);
      } else {
        limiter.released(login);
      }
      done(error, success);
    });
  };
}
