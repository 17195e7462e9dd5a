// What the console's browser tests stand on: the real `invex serve` (sandbox mode, embedded
// SQLite in a temporary directory, a port the system chooses), Debian's Chromium driven by
// playwright-core, and axe-core run inside every page the tests visit.

import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const screenshots = join(here, 'screenshots');

/** Resolves when `condition()` is truthy, polling every `everyMs`; rejects after `ms`. */
export async function waitFor(what, condition, { ms = 60_000, everyMs = 50 } = {}) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Starts `invex serve` on an empty database and waits until it is ready. It binds port 0 and
 * tells the address it got; on this first start it prints the first administrator's one-time
 * link, which is returned as `firstAdminLink`.
 *
 * INVEX_BIN names the binary; INVEX_E2E_DIR, if set, is the directory for its data (the
 * calling script removes it), and the server's pid is written there so that the script can
 * end it whatever happens to this process.
 */
/** The sandbox tenant's API key the server is started with (the API side of the story). */
export const BOOTSTRAP_KEY = 'browser-e2e-bootstrap-key-0000000001';

export async function startServer() {
  const bin = process.env.INVEX_BIN;
  if (!bin) throw new Error('INVEX_BIN must name a built invex binary (tools/scripts/browser_e2e.sh sets it)');
  const ownDir = !process.env.INVEX_E2E_DIR;
  const dir = process.env.INVEX_E2E_DIR || mkdtempSync(join(tmpdir(), 'invex-browser-'));
  const child = spawn(resolve(bin), ['serve'], {
    env: {
      ...process.env,
      INVEX_BIND: '127.0.0.1:0',
      INVEX_SFTP_BIND: '127.0.0.1:0',
      INVEX_MODE: 'sandbox',
      INVEX_DATABASE_URL: `sqlite://${join(dir, 'invex.db')}?mode=rwc`,
      INVEX_RULEPACKS: join(root, 'rulepacks'),
      INVEX_WATCH_RULEPACKS: 'false',
      // The delivery worker runs with the sandbox partner answering quickly, so that a
      // timeline reaches the buyer's acceptance within the test.
      INVEX_SENDING_WORKER: 'true',
      INVEX_SENDING_POLL_MS: '100',
      INVEX_SENDING_SANDBOX_RESPONSE_DELAY_MS: '300',
      // Webhooks are delivered (to a receiver of the test's own on loopback, which the
      // sandbox allows).
      INVEX_WEBHOOKS_WORKER: 'true',
      INVEX_WEBHOOKS_RETRY_SCHEDULE_MS: '200,400,800',
      INVEX_WEBHOOKS_POLL_INTERVAL_MS: '100',
      RUST_LOG: 'warn',
      INVEX_BOOTSTRAP_KEY: BOOTSTRAP_KEY,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  writeFileSync(join(dir, 'server.pid'), `${child.pid}\n`);
  let log = '';
  let exited = null;
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);

  const started = await waitFor('the server to print its address and first-admin link', () => {
    if (exited) throw new Error(`invex serve exited (${JSON.stringify(exited)}):\n${log}`);
    const listening = log.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const link = log.match(/first administrator signs in once at (http:\/\/\S+\/console\/links\/\S+)/);
    return listening && link ? { base: listening[1], firstAdminLink: link[1] } : null;
  });
  await waitFor('GET /ready to answer 200', async () => {
    if (exited) throw new Error(`invex serve exited (${JSON.stringify(exited)}):\n${log}`);
    try {
      return (await fetch(`${started.base}/ready`)).status === 200;
    } catch {
      return false;
    }
  });

  return {
    ...started,
    log: () => log,
    async stop() {
      process.off('exit', killOnExit);
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's Chromium (CHROMIUM overrides the path), headless. */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
  });
}

/**
 * Watches a page for what must never happen on a console page: a console error (a blocked
 * stylesheet, a CSP violation) or an uncaught page error. `take()` returns and clears them.
 * Not counted: Chromium's note that a document answered 4xx (the tests assert those statuses
 * themselves) and its request for /favicon.ico, which the console does not serve.
 */
export function watch(page) {
  const problems = [];
  const documents = new Set();
  page.on('request', (r) => { if (r.isNavigationRequest()) documents.add(r.url()); });
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const url = m.location().url || '';
    const expected = m.text().startsWith('Failed to load resource')
      && (documents.has(url) || new URL(url).pathname === '/favicon.ico');
    if (!expected) problems.push(`console error: ${m.text()} (${url})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (r.isNavigationRequest()) return;
    // A page that moves on by itself (the single sign-on pages answer `Refresh: 0`) leaves
    // while its own script or icon may still be loading: the browser aborts them.
    const movedOn = r.failure()?.errorText === 'net::ERR_ABORTED'
      && new URL(r.url()).pathname.startsWith('/console/assets/');
    if (!movedOn) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  return { take: () => problems.splice(0) };
}

/**
 * Runs axe-core in the page. The console's Content-Security-Policy allows only its own script
 * file, so axe is evaluated through the DevTools protocol (which the policy does not govern) rather than
 * added as a script tag: the page is tested exactly as served.
 * Returns { blocking, other }: violations of impact serious or critical, and the rest.
 */
export async function axe(page) {
  const loaded = await page.evaluate(() => typeof window.axe !== 'undefined');
  if (!loaded) await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const summary = (v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary}`),
  });
  const blocking = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const other = result.violations.filter((v) => !blocking.includes(v));
  return { blocking: blocking.map(summary), other: other.map(summary) };
}

/** A full-page screenshot into tests/browser/screenshots/NAME.png. */
export async function screenshot(page, name) {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}
