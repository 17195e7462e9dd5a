// An organisation's OpenID provider for the browser tests: the certified `oidc-provider`
// package, in this process, with one confidential client (invex), PKCE required, and the
// package's development sign-in pages (any login name the test knows, any password; consent
// with one button).
//
// It listens on loopback with a port the system chooses, but its issuer is
// http://localhost:PORT: another site than the invex server at 127.0.0.1, so the way back to
// invex is a cross-site navigation, as it is with a real provider. `localhost` may resolve
// to ::1 or to 127.0.0.1 (Chromium, Node and the server may each choose differently), so the
// same port is listened on at both loopback addresses.
//
// Its screens (oidc-provider's development interactions):
//   login:   form input[name=login] (the account's login name), input[name=password] (any),
//            button[type=submit] "Sign-in"
//   consent: form with input[type=hidden][name=prompt][value=consent],
//            button[type=submit] "Continue"

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

/**
 * oidc-provider announces on the console what a production deployment must change (its
 * development sign-in pages, the in-memory store, and on Node 20 that it prefers Node 22);
 * none of it concerns a test, so those lines are dropped while a provider runs.
 */
let quieted = 0;
let restore = null;
function quiet() {
  if (quieted++ === 0) {
    const { warn, info } = console;
    const drop = (original) => (...args) => {
      if (typeof args[0] === 'string' && args[0].includes('oidc-provider ')) return;
      original.apply(console, args);
    };
    console.warn = drop(warn);
    console.info = drop(info);
    restore = () => { console.warn = warn; console.info = info; };
  }
  return () => {
    if (--quieted === 0) restore();
  };
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    const failed = (e) => reject(e);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(server.address().port);
    });
  });
}

function closed(server) {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Listens with `handler` on 127.0.0.1 and, on the same port, on ::1 when the machine has
 * IPv6 loopback. Returns the port and the servers.
 */
async function listenOnLoopback(handler) {
  for (let attempt = 0; ; attempt++) {
    const v4 = createServer(handler);
    const port = await listen(v4, 0, '127.0.0.1');
    const v6 = createServer(handler);
    try {
      await listen(v6, port, '::1');
      return { port, servers: [v4, v6] };
    } catch (e) {
      // No IPv6 here: 127.0.0.1 is then what localhost is.
      if (e.code === 'EADDRNOTAVAIL' || e.code === 'EAFNOSUPPORT') return { port, servers: [v4] };
      await closed(v4);
      // Someone else has that port on ::1; another one.
      if (e.code !== 'EADDRINUSE' || attempt >= 10) throw e;
    }
  }
}

/**
 * Starts the provider. `accounts` maps a login name (the account's `sub`) to its claims
 * { email, email_verified, name, groups }. Returns { issuer, close() }.
 */
export async function startProvider({ redirectUri, clientId, clientSecret, accounts }) {
  const loud = quiet();
  let servers = [];
  try {
    const { default: Provider } = await import('oidc-provider');

    // Requests arrive before the provider exists only in theory (the port must be known
    // to make it); they are answered 503 then.
    let callback = (req, res) => res.writeHead(503).end();
    const listening = await listenOnLoopback((req, res) => callback(req, res));
    servers = listening.servers;
    const { port } = listening;
    const issuer = `http://localhost:${port}`;

    // A signing key for this run only.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const signing = { ...privateKey.export({ format: 'jwk' }), kid: `test-${randomBytes(6).toString('hex')}`, alg: 'RS256', use: 'sig' };

    const provider = new Provider(issuer, {
      clients: [{
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      }],
      pkce: { required: () => true },
      claims: {
        openid: ['sub'],
        email: ['email', 'email_verified'],
        profile: ['name'],
        groups: ['groups'],
      },
      scopes: ['openid', 'email', 'profile', 'groups'],
      features: { devInteractions: { enabled: true } },
      jwks: { keys: [signing] },
      cookies: { keys: [randomBytes(32).toString('base64url')] },
      // Given explicitly only so that the package does not announce its defaults.
      ttl: {
        AccessToken: 600,
        AuthorizationCode: 60,
        Grant: 600,
        IdToken: 600,
        Interaction: 600,
        Session: 600,
      },
      async findAccount(ctx, id) {
        const account = Object.hasOwn(accounts, id) ? accounts[id] : undefined;
        if (!account) return undefined;
        return {
          accountId: id,
          async claims() {
            return {
              sub: id,
              email: account.email,
              email_verified: account.email_verified,
              name: account.name,
              groups: [...(account.groups ?? [])],
            };
          },
        };
      },
    });
    // A fault of the provider itself (its HTTP 500) is printed; what it refuses (a wrong
    // code_verifier, say) the relying party sees in the answer.
    provider.on('server_error', (ctx, error) => { console.error(`oidc-provider server_error: ${error.stack}`); });
    callback = provider.callback();

    let stopped = false;
    return {
      issuer,
      async close() {
        if (stopped) return;
        stopped = true;
        await Promise.all(servers.map(closed));
        loud();
      },
    };
  } catch (e) {
    await Promise.all(servers.map(closed));
    loud();
    throw e;
  }
}
