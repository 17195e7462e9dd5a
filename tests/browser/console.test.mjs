// The console in a real browser: Debian's Chromium, driven by playwright-core, against the
// real `invex serve` (sandbox, embedded SQLite, empty database). The tests follow one story
// and run in order, each on what the ones before it left: the first administrator takes the
// one-time link, signs in, invites an accountant, reads the rule catalogue in both languages,
// is refused forms without their CSRF token, and signs out, here and everywhere.
//
// Every page visited is checked with axe-core (no violation of impact serious or critical;
// the others are printed) and for console errors, and photographed into screenshots/.
//
//   INVEX_BIN=target/debug/invex node --test tests/browser/   (tools/scripts/browser_e2e.sh)
//
// Sign-in attempts are throttled to 10 a minute per client address: the story signs in
// through the form six times in all, and twice through single sign-on.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';

import { BOOTSTRAP_KEY, axe, launchBrowser, screenshot, startServer, waitFor, watch } from './support.mjs';
import { startProvider } from './oidc.mjs';

const ADMIN = { email: 'admin@example.sk', password: 'správne kone batéria zošívačka' };
const ACCOUNTANT = { email: 'uctovnik@example.sk', password: 'účty-sú-v-poriadku-2026' };

// What the pages say, in each language (server/src/routes/console/i18n.rs).
const T = {
  en: {
    signInTitle: 'Sign in to invex',
    signIn: 'Sign in',
    email: 'E-mail address',
    password: 'Password',
    refused: 'The address or the password is not right.',
    linkTitle: 'Set your password',
    firstAdmin: 'You are the first administrator.',
    invitation: 'Choose the password you will sign in with.',
    newPassword: 'New password',
    setPassword: 'Set password and sign in',
    linkGone: 'This link is unknown, has been used, or has expired.',
    homeTitle: 'invex console',
    signedInAs: 'Signed in as',
    admin: 'Administrator',
    role: 'Role',
    accountant: 'Accountant',
    people: 'People',
    peopleTitle: 'People and roles',
    invite: 'Invite',
    invitationLink: 'Invitation link',
    noPasswordYet: 'invited, no password yet',
    active: 'active',
    forbiddenTitle: 'Not allowed',
    forbidden: 'Your role does not allow this page.',
    rules: 'Rules',
    rulesTitle: 'Rule catalogue',
    searchText: 'Rule id or words of its message',
    search: 'Search',
    found: 'rules found',
    message: 'Message',
    owner: 'Who fixes it',
    versions: 'Versions',
    runBy: 'Run by',
    ruleNotFound: 'No installed rule pack carries this rule.',
    severity: 'Severity',
    warning: 'warning',
    switchTo: 'Slovensky',
    signOut: 'Sign out',
    signOutEverywhere: 'Sign out everywhere',
    signedOutEverywhere: 'Every session of yours has ended.',
    refusedCsrf: 'The form has expired.',
    refusedCrossSite: 'The request did not come from this site.',
    skip: 'Skip to content',
    validate: 'Validate',
    connections: 'Connections',
    connectionName: 'Name',
    partner: 'Partner',
    baseUrl: "The partner's API root (https)",
    apiKey: "The partner's API key",
    createConnection: 'Create the connection',
    activate: 'Activate',
    activated: 'The connection is active: invoices are sent through it.',
    webhooks: 'Webhooks',
    sendTest: 'Send a test event',
    tested: 'The test event waits for delivery.',
    redeliver: 'Redeliver',
    redelivered: 'The event waits for a new delivery.',
    rotate: 'Rotate the secret',
    newSecret: 'New secret',
    invoices: 'Invoices',
    invoicesTitle: 'Sent invoices',
    timeline: 'Timeline',
    evidence: 'Evidence package (ZIP)',
    documentXml: 'The document as sent (XML)',
    documentPdf: 'The invoice rendered (PDF)',
    sendButton: 'Send the invoice to the buyer',
    status: 'Status',
    review: 'Review',
    reviewTitle: 'Review conversions',
    save: 'Save corrections',
    corrected: 'The corrections are saved; the invoice was written and validated again.',
    approveButton: 'Approve the conversion',
    approved: 'The conversion is approved and may be sent.',
    comment: 'Comment (optional)',
    rejectReason: 'Why it is rejected',
    rejectButton: 'Reject the conversion',
    rejected: 'The conversion is rejected; it will never be sent.',
    changedMeanwhile: 'Someone else changed this conversion meanwhile; look at it again.',
    validateTitle: 'Validate invoices',
    files: 'Invoices (XML or JSON)',
    validateButton: 'Validate',
    rulesUsed: 'Profile and rule versions',
    fatal: 'Fatal',
    terms: 'Business terms',
  },
  sk: {
    signInTitle: 'Prihlásenie do invex',
    signIn: 'Prihlásiť sa',
    email: 'E-mailová adresa',
    password: 'Heslo',
    refused: 'Adresa alebo heslo nie je správne.',
    linkTitle: 'Nastavte si heslo',
    firstAdmin: 'Ste prvý administrátor.',
    invitation: 'Zvoľte heslo, ktorým sa budete prihlasovať.',
    newPassword: 'Nové heslo',
    setPassword: 'Nastaviť heslo a prihlásiť sa',
    linkGone: 'Tento odkaz je neznámy, už bol použitý alebo vypršal.',
    homeTitle: 'Konzola invex',
    signedInAs: 'Prihlásený ako',
    role: 'Rola',
    admin: 'Administrátor',
    people: 'Ľudia',
    peopleTitle: 'Ľudia a roly',
    rules: 'Pravidlá',
    rulesTitle: 'Katalóg pravidiel',
    searchText: 'Id pravidla alebo slová z jeho správy',
    search: 'Hľadať',
    found: 'nájdených pravidiel',
    message: 'Správa',
    owner: 'Kto to opraví',
    versions: 'Verzie',
    switchTo: 'English',
    signOut: 'Odhlásiť sa',
    signOutEverywhere: 'Odhlásiť sa všade',
    signedOutEverywhere: 'Všetky vaše relácie sa skončili.',
    validateTitle: 'Overenie faktúr',
    reviewTitle: 'Kontrola prevodov',
    invoicesTitle: 'Odoslané faktúry',
  },
};

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

let server;
let browser;
/** Every (page, language) checked with axe, and the violations below serious seen there. */
const checked = new Map();
const minor = [];

/** A new browser context whose Accept-Language (and navigator.language) is `lang`. */
async function context(lang, options = {}) {
  const ctx = await browser.newContext({ baseURL: server.base, locale: lang, ...options });
  ctx.setDefaultTimeout(10_000);
  const page = await ctx.newPage();
  page.problems = watch(page);
  return { ctx, page };
}

/** Asserts the security headers every console page carries. */
function assertSecured(response) {
  const h = response.headers();
  assert.equal(h['content-security-policy'], CSP, `CSP of ${response.url()}`);
  assert.equal(h['referrer-policy'], 'same-origin');
  assert.equal(h['x-content-type-options'], 'nosniff');
  assert.equal(h['cache-control'], 'no-store');
}

/** Navigates and returns the (last) response, after asserting its status and headers. */
async function open(page, path, status = 200) {
  const response = await page.goto(path);
  assert.equal(response.status(), status, `GET ${path} answered ${response.status()}`);
  assertSecured(response);
  return response;
}

/** Clicks what submits a form and returns the response of the page it leads to. */
async function submit(page, clickable, status) {
  const [response] = await Promise.all([page.waitForNavigation(), clickable.click()]);
  assert.equal(response.status(), status, `the form led to ${response.url()} with ${response.status()}`);
  assertSecured(response);
  return response;
}

/**
 * The checks of every page: its language, no console error, axe-core without serious or
 * critical violations (others are printed), and a screenshot NAME.LANG.png.
 */
async function check(page, name, lang) {
  assert.equal(await page.locator('html').getAttribute('lang'), lang, `${name}: html lang`);
  const { blocking, other } = await axe(page);
  for (const v of other) minor.push({ page: `${name}.${lang}`, ...v });
  assert.deepEqual(blocking, [], `${name}.${lang}: serious or critical accessibility violations`);
  assert.deepEqual(page.problems.take(), [], `${name}.${lang}: console errors`);
  checked.set(`${name}.${lang}`, other.length);
  await screenshot(page, `${name}.${lang}`);
}

async function heading(page) {
  return (await page.getByRole('heading', { level: 1 }).textContent()).trim();
}

/** The value shown for a term of the page's description list. */
function described(page, term) {
  return page.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]');
}

async function sessionCookie(ctx) {
  return (await ctx.cookies()).find((c) => c.name === 'invex_session');
}

describe('the console in Chromium', () => {
  // Signed-in contexts the story goes on with.
  let adminSk; // the first administrator, through the one-time link, Slovak
  let adminEn; // the same person signed in through the form, English
  let sentInvoice; // the invoice the review story sends
  let invitationLink;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });

  after(async () => {
    if (minor.length) {
      console.log('axe-core violations below serious (not failing):');
      for (const v of minor) {
        console.log(`  ${v.page}: ${v.id} (${v.impact}) ${v.help}`);
        for (const n of v.nodes) console.log(`    ${n.replace(/\s+/g, ' ')}`);
      }
    }
    await browser?.close();
    await server?.stop();
  });

  it('first administrator: the one-time link sets e-mail and password, signs in, and works once', async () => {
    const link = server.firstAdminLink;
    assert.match(link, new RegExp(`^${server.base}/console/links/[A-Za-z0-9_-]{20,}$`));

    // Opening the link does not use it: it shows the form, in either language.
    const en = await context('en-GB');
    await open(en.page, link);
    assert.equal(await heading(en.page), T.en.linkTitle);
    await assert.doesNotReject(en.page.getByText(T.en.firstAdmin).waitFor());
    await check(en.page, 'set-password', 'en');
    await en.ctx.close();

    adminSk = await context('sk');
    const { page } = adminSk;
    await open(page, link);
    assert.equal(await heading(page), T.sk.linkTitle);
    await page.getByText(T.sk.firstAdmin).waitFor();
    assert.equal(await page.getByLabel(T.sk.newPassword).getAttribute('aria-describedby'), 'password-hint');
    await check(page, 'set-password', 'sk');

    await page.getByLabel(T.sk.email).fill(ADMIN.email);
    await page.getByLabel(T.sk.newPassword).fill(ADMIN.password);
    await submit(page, page.getByRole('button', { name: T.sk.setPassword }), 200);
    assert.equal(new URL(page.url()).pathname, '/console');
    assert.equal(await heading(page), T.sk.homeTitle);
    assert.equal((await described(page, T.sk.signedInAs).textContent()).trim(), ADMIN.email);
    assert.equal((await described(page, T.sk.role).textContent()).trim(), T.sk.admin);
    const cookie = await sessionCookie(adminSk.ctx);
    assert.ok(cookie, 'the session cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/');
    await check(page, 'home', 'sk');

    // A second time, the link is gone: its page says so, and its form is refused.
    const again = await context('en');
    await open(again.page, link, 404);
    await again.page.getByRole('alert').filter({ hasText: T.en.linkGone }).waitFor();
    assert.equal(await again.page.getByLabel(T.en.newPassword).count(), 0);
    await check(again.page, 'link-gone', 'en');
    const post = await again.page.request.post(link, {
      form: { email: 'someone@example.sk', password: 'another long password' },
      maxRedirects: 0,
    });
    assert.equal(post.status(), 410);
    assert.equal(await sessionCookie(again.ctx), undefined);
    await again.ctx.close();
  });

  it('sign-in: a wrong password is refused and leaves the browser signed out; the right one signs in', async () => {
    adminEn = await context('en-GB');
    const { page, ctx } = adminEn;
    // Signed out, the console leads to the sign-in page.
    await open(page, '/console');
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    assert.equal(await heading(page), T.en.signInTitle);
    await check(page, 'sign-in', 'en');

    await page.getByLabel(T.en.email).fill(ADMIN.email);
    await page.getByLabel(T.en.password).fill('not the password at all');
    await submit(page, page.getByRole('main').getByRole('button', { name: T.en.signIn }), 401);
    assert.equal((await page.getByRole('alert').textContent()).trim(), T.en.refused);
    // The address stays filled in, the password does not.
    assert.equal(await page.getByLabel(T.en.email).inputValue(), ADMIN.email);
    assert.equal(await page.getByLabel(T.en.password).inputValue(), '');
    assert.equal(await sessionCookie(ctx), undefined);
    await check(page, 'sign-in-refused', 'en');
    await open(page, '/console');
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');

    await page.getByLabel(T.en.email).fill(ADMIN.email);
    await page.getByLabel(T.en.password).fill(ADMIN.password);
    await submit(page, page.getByRole('main').getByRole('button', { name: T.en.signIn }), 200);
    assert.equal(new URL(page.url()).pathname, '/console');
    assert.equal(await heading(page), T.en.homeTitle);
    assert.equal((await described(page, T.en.signedInAs).textContent()).trim(), ADMIN.email);
    assert.ok(await sessionCookie(ctx));
    await check(page, 'home', 'en');

    // Signed in, the sign-in page leads to the console.
    await open(page, '/console/sign-in');
    assert.equal(new URL(page.url()).pathname, '/console');
  });

  it('people: the admin invites an accountant, who sets a password and sees only what the role allows', async () => {
    const { page } = adminEn;
    await page.getByRole('navigation').getByRole('link', { name: T.en.people }).click();
    await page.waitForURL('**/console/people');
    assert.equal(await heading(page), T.en.peopleTitle);
    await check(page, 'people', 'en');

    await page.getByLabel(T.en.email).fill(ACCOUNTANT.email);
    await page.getByLabel(T.en.role).selectOption('accountant');
    await submit(page, page.getByRole('button', { name: T.en.invite }), 201);
    const shown = page.getByRole('region', { name: T.en.invitationLink });
    invitationLink = (await shown.locator('code').textContent()).trim();
    assert.match(invitationLink, new RegExp(`^${server.base}/console/links/[A-Za-z0-9_-]{20,}$`));
    const row = page.getByRole('row').filter({ hasText: ACCOUNTANT.email });
    assert.deepEqual(
      (await row.getByRole('cell').allTextContents()).map((s) => s.trim()),
      [ACCOUNTANT.email, T.en.accountant, T.en.noPasswordYet],
    );
    await check(page, 'people-invited', 'en');

    // The same list in Slovak, for the other session of the admin.
    await open(adminSk.page, '/console/people');
    assert.equal(await heading(adminSk.page), T.sk.peopleTitle);
    await adminSk.page.getByRole('cell', { name: ACCOUNTANT.email }).waitFor();
    await check(adminSk.page, 'people', 'sk');

    // The invitee, in a browser of their own.
    const invitee = await context('en');
    const p = invitee.page;
    await open(p, invitationLink);
    assert.equal(await heading(p), T.en.linkTitle);
    await p.getByText(T.en.invitation).waitFor();
    assert.equal(await p.getByLabel(T.en.email).count(), 0, 'an invitation does not ask for the address');
    await check(p, 'set-password-invitation', 'en');
    await p.getByLabel(T.en.newPassword).fill(ACCOUNTANT.password);
    await submit(p, p.getByRole('button', { name: T.en.setPassword }), 200);
    assert.equal(new URL(p.url()).pathname, '/console');
    assert.equal((await described(p, T.en.signedInAs).textContent()).trim(), ACCOUNTANT.email);
    assert.equal((await described(p, T.en.role).textContent()).trim(), T.en.accountant);
    const nav = p.getByRole('navigation');
    assert.equal(await nav.getByRole('link', { name: T.en.rules }).count(), 1);
    assert.equal(await nav.getByRole('link', { name: T.en.people }).count(), 0, 'no People link for an accountant');
    await check(p, 'home-accountant', 'en');

    // People is refused, even asked for directly, and so is inviting with the accountant's
    // own valid CSRF token.
    await open(p, '/console/people', 403);
    assert.equal(await heading(p), T.en.forbiddenTitle);
    assert.equal((await p.getByRole('alert').textContent()).trim(), T.en.forbidden);
    await check(p, 'forbidden', 'en');
    const csrf = await p.locator('input[name=csrf]').first().inputValue();
    const invite = await p.request.post('/console/people', {
      form: { csrf, email: 'mallory@example.sk', role: 'admin' },
      maxRedirects: 0,
    });
    assert.equal(invite.status(), 403);
    // The rule catalogue is for every role.
    await open(p, '/console/rules');
    assert.equal(await heading(p), T.en.rulesTitle);

    // The link has been used; the password it set signs in.
    await open(p, invitationLink, 404);
    await open(p, '/console');
    await submit(p, p.getByRole('navigation').getByRole('button', { name: T.en.signOut }), 200);
    assert.equal(new URL(p.url()).pathname, '/console/sign-in');
    await p.getByLabel(T.en.email).fill(ACCOUNTANT.email);
    await p.getByLabel(T.en.password).fill(ACCOUNTANT.password);
    await submit(p, p.getByRole('main').getByRole('button', { name: T.en.signIn }), 200);
    assert.equal((await described(p, T.en.signedInAs).textContent()).trim(), ACCOUNTANT.email);
    await invitee.ctx.close();

    // The admin sees the accountant active now, and no trace of the refused invitation.
    await open(page, '/console/people');
    assert.deepEqual(
      (await row.getByRole('cell').allTextContents()).map((s) => s.trim()),
      [ACCOUNTANT.email, T.en.accountant, T.en.active],
    );
    assert.equal(await page.getByRole('cell', { name: 'mallory@example.sk' }).count(), 0);
  });

  it('rule catalogue: search by rule id, open a rule, read its message, owner and versions', async () => {
    const { page } = adminEn;
    await page.getByRole('navigation').getByRole('link', { name: T.en.rules }).click();
    await page.waitForURL('**/console/rules');
    assert.equal(await heading(page), T.en.rulesTitle);
    const total = Number((await page.getByRole('status').textContent()).trim().split(' ')[0]);
    assert.ok(total > 100, `the whole catalogue lists ${total} rules`);
    await check(page, 'rules', 'en');

    await page.getByLabel(T.en.searchText).fill('BR-01');
    await submit(page, page.getByRole('button', { name: T.en.search }), 200);
    assert.equal(new URL(page.url()).searchParams.get('q'), 'BR-01');
    assert.equal(await page.getByLabel(T.en.searchText).inputValue(), 'BR-01');
    const found = Number((await page.getByRole('status').textContent()).trim().split(' ')[0]);
    assert.ok(found >= 1 && found < total, `BR-01 finds ${found} of ${total}`);
    const ids = (await page.locator('tbody tr td:first-child').allTextContents()).map((s) => s.trim());
    assert.equal(ids.length, found);
    const rows = await page.locator('tbody tr').allTextContents();
    for (const r of rows) assert.match(r, /br-01/i, 'every hit has BR-01 in its id or message');
    assert.ok(ids.includes('BR-01'));
    await check(page, 'rules-search', 'en');

    const listed = (await page.getByRole('row').filter({ has: page.getByRole('link', { name: 'BR-01', exact: true }) })
      .getByRole('cell').allTextContents()).map((c) => c.trim());
    await page.getByRole('link', { name: 'BR-01', exact: true }).click();
    await page.waitForURL('**/console/rules/BR-01');
    assert.equal(await heading(page), 'BR-01');
    // The page says what the list said, and more.
    assert.equal((await described(page, T.en.message).textContent()).trim(), listed[3]);
    assert.ok(listed[3].length > 10);
    assert.equal((await described(page, T.en.owner).textContent()).trim(), listed[2]);
    assert.match(listed[2], /^[a-z]+(-[a-z]+)*$/);
    assert.match(await described(page, T.en.severity).textContent(), new RegExp(`^${listed[1]} \\(en16931`));
    await page.getByRole('heading', { level: 2, name: T.en.versions }).waitFor();
    const versions = page.locator('main h2 + ul > li');
    assert.ok((await versions.count()) >= 1);
    assert.match(await versions.first().textContent(), new RegExp(`en16931.*${T.en.runBy}`, 's'));
    await check(page, 'rule', 'en');

    // A filter of the form: only warnings.
    await open(page, '/console/rules');
    await page.getByLabel(T.en.severity).selectOption('warning');
    await submit(page, page.getByRole('button', { name: T.en.search }), 200);
    const severities = (await page.locator('tbody tr td:nth-child(2)').allTextContents()).map((s) => s.trim());
    assert.ok(severities.length >= 1);
    assert.deepEqual([...new Set(severities)], [T.en.warning]);

    // A rule no pack carries.
    await open(page, '/console/rules/NO-SUCH-RULE-1', 404);
    assert.equal((await page.getByRole('alert').textContent()).trim(), T.en.ruleNotFound);

    // A Peppol rule, in Slovak.
    const sk = adminSk.page;
    await open(sk, '/console/rules');
    assert.equal(await heading(sk), T.sk.rulesTitle);
    await check(sk, 'rules', 'sk');
    await sk.getByLabel(T.sk.searchText).fill('PEPPOL-EN16931-R001');
    await submit(sk, sk.getByRole('button', { name: T.sk.search }), 200);
    assert.match(await sk.getByRole('status').textContent(), new RegExp(`^\\s*\\d+ ${T.sk.found}`));
    const peppol = (await sk.getByRole('row').filter({ has: sk.getByRole('link', { name: 'PEPPOL-EN16931-R001', exact: true }) })
      .getByRole('cell').allTextContents()).map((c) => c.trim());
    await sk.getByRole('link', { name: 'PEPPOL-EN16931-R001', exact: true }).click();
    await sk.waitForURL('**/console/rules/PEPPOL-EN16931-R001');
    assert.equal(await heading(sk), 'PEPPOL-EN16931-R001');
    assert.equal((await described(sk, T.sk.message).textContent()).trim(), peppol[3]);
    assert.equal((await described(sk, T.sk.owner).textContent()).trim(), peppol[2]);
    assert.match(peppol[2], /^[a-z]+(-[a-z]+)*$/);
    await sk.getByRole('heading', { level: 2, name: T.sk.versions }).waitFor();
    assert.match(await sk.locator('main h2 + ul > li').first().textContent(), /peppol/);
    await check(sk, 'rule', 'sk');
  });

  it('validate: files uploaded together, each with its verdict, findings by severity linked to the XML lines, reports to download', async () => {
    const { page } = adminEn;
    await page.getByRole('navigation').getByRole('link', { name: T.en.validate }).click();
    await page.waitForURL('**/console/validate');
    assert.equal(await heading(page), T.en.validateTitle);
    await check(page, 'validate', 'en');

    const repo = new URL('../../', import.meta.url).pathname;
    const file = (path) => ({ name: path.split('/').pop(), mimeType: 'text/xml', buffer: readFileSync(`${repo}${path}`) });
    await page.getByLabel(T.en.files).setInputFiles([
      file('examples/invoice-sk.xml'),
      file('rulepacks/en16931-ubl/1.3.16/fixtures/BR-01.xml'),
      { name: 'notes.xml', mimeType: 'text/xml', buffer: Buffer.from('this is not XML') },
    ]);
    await submit(page, page.getByRole('button', { name: T.en.validateButton, exact: true }), 200);

    // The summary names each file with its verdict, in the order sent.
    const summary = (await page.getByRole('status').locator('li').allTextContents()).map((s) => s.trim());
    assert.equal(summary.length, 3);
    assert.match(summary[0], /^invoice-sk\.xml: valid \(0 \/ \d+ \/ \d+\)$/);
    assert.match(summary[1], /^BR-01\.xml: invalid \([1-9]\d* \/ \d+ \/ \d+\)$/);
    assert.equal(summary[2], 'notes.xml: not validated');
    const problem = page.locator('#doc-2').getByRole('alert');
    assert.match(await problem.textContent(), /XML/);

    // The invalid document: its profile and rule versions, fatal findings with BR-01 among them.
    const doc = page.locator('#doc-1');
    assert.match(await described(doc, T.en.rulesUsed).textContent(), /en16931-ubl@1\.3\.16/);
    await doc.getByRole('heading', { level: 3, name: new RegExp(`^${T.en.fatal} \\(\\d+\\)$`) }).waitFor();
    const br01 = doc.locator('li.finding.fatal').filter({ has: page.getByRole('link', { name: 'BR-01', exact: true }) });
    assert.equal(await br01.count(), 1);
    assert.ok((await br01.locator('p.hint').textContent()).length > 10, 'the remediation is shown');
    assert.match(await described(br01, T.en.terms).textContent(), /BT-24/);

    // Each finding with a line links to that line of the XML shown beside, marked by severity.
    const place = br01.locator('dd a[href^="#doc-1-L"]');
    const target = (await place.getAttribute('href')).slice(1);
    await place.click();
    assert.equal(new URL(page.url()).hash, `#${target}`);
    const line = page.locator(`[id="${target}"]`);
    assert.match(await line.getAttribute('class'), /\bhit fatal\b/);
    const [lineNo, col] = (await place.textContent()).split(':').map(Number);
    assert.equal(target, `doc-1-L${lineNo}`);
    assert.ok(col >= 1);
    assert.equal((await line.locator('.no').textContent()).trim(), String(lineNo));
    // The node itself is marked: the start tag the finding's column points at.
    const node = line.locator('mark.node.fatal');
    assert.equal(await node.count(), 1);
    const lineText = (await line.textContent()).slice(String(lineNo).length);
    assert.equal(lineText.indexOf(await node.textContent()), col - 1, 'the mark starts at the column');
    assert.match(await node.textContent(), /^<[A-Za-z:]+[\s\S]*>$|^<[A-Za-z:]+[^>]*$/);
    // Lines without findings are not marked.
    assert.equal(await page.locator('#doc-0 .line.hit').count(), 0);
    await check(page, 'validate-results', 'en');

    // The reports: the stored result as JSON, and as SVRL.
    const json = await page.request.get(await doc.getByRole('link', { name: 'JSON' }).getAttribute('href'));
    assert.equal(json.status(), 200);
    assert.match(json.headers()['content-disposition'], /^attachment; filename="val_[^"]+\.json"$/);
    const report = await json.json();
    assert.equal(report.verdict, 'invalid');
    assert.equal(report.document.file_name, 'BR-01.xml');
    assert.ok(report.findings.some((f) => f.rule_id === 'BR-01'));
    const svrl = await page.request.get(await doc.getByRole('link', { name: 'SVRL' }).getAttribute('href'));
    assert.equal(svrl.status(), 200);
    assert.equal(svrl.headers()['content-type'], 'application/svrl+xml');
    assert.match(await svrl.text(), /<svrl:failed-assert[^>]*id="BR-01"/);
    // Another tenant's or an unknown id is not found; a session is required.
    const unknown = await page.request.get('/console/validations/val_nope/report.json');
    assert.equal(unknown.status(), 404);
    const { ctx: anon, page: anonPage } = await context('en');
    const signedOut = await anonPage.request.get(await doc.getByRole('link', { name: 'JSON' }).getAttribute('href'), { maxRedirects: 0 });
    assert.equal(signedOut.status(), 303);
    await anon.close();

    // In Slovak, the same screen.
    const sk = adminSk.page;
    await open(sk, '/console/validate');
    assert.equal(await heading(sk), T.sk.validateTitle);
    await check(sk, 'validate', 'sk');
  });

  it('review: a held conversion is corrected in place, approved with a comment, another rejected; the API sees the same', async () => {
    // Two invoices converted through the API (X-API-Key of the same sandbox tenant), each
    // held by the gate for an IBAN whose check digits are wrong.
    const columns = ['Invoice number', 'Issue date', 'Due date', 'Currency', 'Buyer reference', 'Seller name',
      'Seller company ID', 'Seller VAT ID', 'Seller street', 'Seller city', 'Seller postcode', 'Seller country',
      'Buyer name', 'Buyer VAT ID', 'Buyer street', 'Buyer city', 'Buyer postcode', 'Buyer country',
      'Payment means', 'IBAN', 'Item name', 'Quantity', 'Unit', 'Unit price', 'VAT rate'];
    const badIban = 'SK3112000000198742637542';
    const goodIban = 'SK3112000000198742637541';
    const convert = async (name, number) => {
      const row = [number, '15.01.2027', '2027-01-29', 'EUR', 'PO-4711', 'Dodávateľ s.r.o.', '31322832',
        'SK2022749619', 'Hlavná 1', 'Žilina', '010 01', 'SK', 'Odberateľ a.s.', 'SK2020317068',
        'Ľubovnianska 5', 'Bratislava', '851 01', 'SK', '30', badIban, 'Servis', '1', 'ks', '100', '23'];
      const form = new FormData();
      form.append('file', new Blob([`${columns.join(',')}\r\n${row.join(',')}\r\n`], { type: 'text/csv' }), name);
      const r = await fetch(`${server.base}/v1/invoice/convert`, { method: 'POST', headers: { 'X-API-Key': BOOTSTRAP_KEY }, body: form });
      assert.equal(r.status, 201, await r.clone().text());
      const c = (await r.json()).conversions[0];
      assert.equal(c.status, 'needs_review');
      return c.id;
    };
    const api = async (path) => {
      const r = await fetch(`${server.base}${path}`, { headers: { 'X-API-Key': BOOTSTRAP_KEY } });
      assert.equal(r.status, 200);
      return r.json();
    };
    const first = await convert('held.csv', 'FV-1');
    const second = await convert('other.csv', 'FV-2');

    const { page } = adminEn;
    await page.getByRole('navigation').getByRole('link', { name: T.en.review }).click();
    await page.waitForURL('**/console/review');
    assert.equal(await heading(page), T.en.reviewTitle);
    assert.equal(await page.getByRole('link', { name: 'held.csv' }).count(), 1);
    assert.equal(await page.getByRole('link', { name: 'other.csv' }).count(), 1);
    await check(page, 'review', 'en');

    await page.getByRole('link', { name: 'held.csv' }).click();
    await page.waitForURL(`**/console/review/${first}`);
    // The reason names the field and links to its row, where the value and its source are.
    const reason = page.getByRole('link', { name: 'payment.iban' }).first();
    assert.equal(await reason.getAttribute('href'), '#f-payment-iban');
    const iban = page.getByLabel('payment.iban');
    assert.equal(await iban.inputValue(), badIban);
    assert.match(await page.locator('#f-payment-iban').textContent(), /row 2, column "IBAN"/);
    assert.match(await page.locator('#f-payment-iban .confidence').textContent(), /^\d+ % (low|medium|high)$/);
    // The source beside the values: the header row and row 2 of the CSV, the IBAN cell
    // marked and linked from the value's row.
    const fromLink = page.locator('#f-payment-iban td a[href="#src-payment-iban"]');
    assert.equal(await fromLink.count(), 1);
    const cell = page.locator('#src-payment-iban');
    assert.equal((await cell.textContent()).trim(), badIban);
    assert.match(await cell.getAttribute('class'), /\bcited\b/);
    const sourceRows = await page.locator('table.sheet tbody th[scope=row]').allTextContents();
    assert.deepEqual(sourceRows.map((t) => t.trim()), ['1', '2']);
    await fromLink.click();
    assert.equal(new URL(page.url()).hash, '#src-payment-iban');
    const original = await page.request.get(`/console/review/${first}/input`);
    assert.equal(original.status(), 200);
    assert.match(original.headers()['content-type'], /^text\/csv/);
    assert.match(await original.text(), new RegExp(`^Invoice number,.*\r\nFV-1,.*${badIban}`, 's'));
    await check(page, 'review-detail', 'en');

    // Corrected in place: the XML is written again, the trail names the person.
    await iban.fill(goodIban);
    await submit(page, page.getByRole('button', { name: T.en.save }), 200);
    assert.equal(new URL(page.url()).searchParams.get('done'), 'corrected');
    assert.equal((await page.getByRole('status').textContent()).trim(), T.en.corrected);
    assert.equal(await page.getByLabel('payment.iban').inputValue(), goodIban);
    assert.match(await page.locator('main').textContent(), new RegExp(`${ADMIN.email}: payment\\.iban ${badIban} → ${goodIban}`));
    assert.equal(await page.getByRole('link', { name: 'payment.iban' }).count(), 0, 'the IBAN no longer holds it');

    // A form from before the change is refused: someone changed it meanwhile.
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const stale = await page.request.post(`/console/review/${first}/approve`, {
      form: { csrf, expected: '2000-01-01T00:00:00Z', note: '' }, headers: { 'Accept-Language': 'en' }, maxRedirects: 0 });
    assert.equal(stale.status(), 409);
    assert.match(await stale.text(), new RegExp(T.en.changedMeanwhile));

    await page.getByLabel(T.en.comment).fill('IBAN checked against the contract');
    await submit(page, page.getByRole('button', { name: T.en.approveButton }), 200);
    assert.equal((await page.getByRole('status').textContent()).trim(), T.en.approved);
    const approved = await api(`/v1/conversions/${first}`);
    assert.equal(approved.status, 'approved');
    assert.equal(approved.approved_by, ADMIN.email);
    assert.equal(approved.review_note, 'IBAN checked against the contract');
    assert.equal(approved.changes.at(-1).by, ADMIN.email);

    // Sent from the console through the tenant's (sandbox) delivery connection: the page of
    // the new invoice follows, and the conversion links to it.
    // The connection is made on the Connections screen: an insecure partner API is refused
    // with the reason, the sandbox partner created and activated.
    await page.getByRole('navigation').getByRole('link', { name: T.en.connections }).click();
    await page.waitForURL('**/console/connections');
    await check(page, 'connections', 'en');
    await page.getByLabel(T.en.connectionName, { exact: true }).fill('partner over http');
    await page.getByLabel(T.en.partner, { exact: true }).selectOption('http');
    await page.getByLabel(T.en.baseUrl).fill('http://partner.example/api');
    await page.getByLabel(T.en.apiKey).fill('partner-key');
    await submit(page, page.getByRole('button', { name: T.en.createConnection }), 422);
    assert.match(await page.getByRole('alert').textContent(), /must be https/);
    await page.getByLabel(T.en.connectionName, { exact: true }).fill('browser partner');
    await page.getByLabel(T.en.partner, { exact: true }).selectOption('sandbox');
    await submit(page, page.getByRole('button', { name: T.en.createConnection }), 201);
    await submit(page, page.getByRole('button', { name: `${T.en.activate} browser partner` }), 200);
    assert.equal((await page.getByRole('status').textContent()).trim(), T.en.activated);
    const listed = await (await fetch(`${server.base}/v1/connections`, { headers: { 'X-API-Key': BOOTSTRAP_KEY } })).json();
    assert.deepEqual(listed.connections.map((c) => [c.name, c.status]), [['browser partner', 'active']]);
    await open(page, `/console/review/${first}`);
    await submit(page, page.getByRole('button', { name: T.en.sendButton }), 200);
    assert.match(new URL(page.url()).pathname, /^\/console\/invoices\/inv_/);
    sentInvoice = new URL(page.url()).pathname.split('/').pop();
    assert.equal((await api(`/v1/conversions/${first}`)).invoice_id, sentInvoice);
    await open(page, `/console/review/${first}`);
    assert.equal(await page.getByRole('link', { name: sentInvoice }).count(), 1);
    assert.equal(await page.getByRole('button', { name: T.en.sendButton }).count(), 0, 'sent once, never again');

    // The other one is rejected; a rejection needs a reason.
    await open(page, `/console/review/${second}`);
    const csrf2 = await page.locator('input[name=csrf]').first().inputValue();
    const expected2 = await page.locator('input[name=expected]').first().inputValue();
    const bare = await page.request.post(`/console/review/${second}/reject`, {
      form: { csrf: csrf2, expected: expected2, reason: '  ' }, maxRedirects: 0 });
    assert.equal(bare.status(), 422);
    await page.getByLabel(T.en.rejectReason).fill('A duplicate of FV-1');
    await submit(page, page.getByRole('button', { name: T.en.rejectButton }), 200);
    assert.equal((await page.getByRole('status').textContent()).trim(), T.en.rejected);
    assert.equal(await page.getByRole('button', { name: T.en.approveButton }).count(), 0, 'a rejected conversion is final');
    assert.equal(await page.getByLabel('payment.iban').getAttribute('readonly'), '');
    const rejected = await api(`/v1/conversions/${second}`);
    assert.equal(rejected.status, 'rejected');
    assert.match(rejected.review_note, /A duplicate of FV-1/);

    // The queue is empty now; in Slovak as well.
    await open(page, '/console/review');
    assert.equal(await page.getByRole('link', { name: 'held.csv' }).count(), 0);
    const sk = adminSk.page;
    await open(sk, '/console/connections');
    await check(sk, 'connections', 'sk');
    await open(sk, '/console/review');
    assert.equal(await heading(sk), T.sk.reviewTitle);
    await check(sk, 'review', 'sk');
    await open(sk, `/console/review/${first}`);
    await check(sk, 'review-detail', 'sk');
  });

  it('review: a held PDF is shown as its page, each value marked by confidence; editing a value marks its source', async () => {
    const repo = new URL('../../', import.meta.url).pathname;
    const form = new FormData();
    const pdf = readFileSync(`${repo}server/fuzz/seeds/pdf/invoice-plain.pdf`);
    form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'invoice-plain.pdf');
    const r = await fetch(`${server.base}/v1/invoice/convert`, { method: 'POST', headers: { 'X-API-Key': BOOTSTRAP_KEY }, body: form });
    assert.equal(r.status, 201, await r.clone().text());
    const c = (await r.json()).conversions[0];
    assert.equal(c.status, 'needs_review');

    const { page } = adminEn;
    await open(page, `/console/review/${c.id}`);
    const drawn = page.getByRole('img', { name: 'Page 1' });
    assert.equal(await drawn.count(), 1);
    const box = await drawn.boundingBox();
    assert.ok(box.width > 300 && box.height > box.width, `an A4 page in portrait: ${JSON.stringify(box)}`);
    const iban = page.locator('#src-payment-iban');
    assert.match(await iban.getAttribute('class'), /\bcited high\b/);
    assert.match(await page.locator('#src-totals-tax-inclusive').getAttribute('class'), /\bcited low\b/);
    // The value's row links to its place on the page; editing the value marks it there
    // (console.js), leaving the field takes the mark away.
    assert.equal(await page.locator('#f-payment-iban td a[href="#src-payment-iban"]').count(), 1);
    await page.getByLabel('payment.iban').focus();
    assert.match(await iban.getAttribute('class'), /\bactive\b/);
    await page.getByLabel('number', { exact: true }).focus();
    assert.doesNotMatch(await iban.getAttribute('class'), /\bactive\b/);
    await check(page, 'review-pdf', 'en');
  });

  it('invoices: the sent invoice in the list, its timeline reaching the buyer\'s acceptance, the document, its rendition and the evidence package', async () => {
    const api = async (path) => {
      const r = await fetch(`${server.base}${path}`, { headers: { 'X-API-Key': BOOTSTRAP_KEY } });
      assert.equal(r.status, 200);
      return r.json();
    };
    assert.ok(sentInvoice, 'the review story sent an invoice');
    const invoiceId = sentInvoice;
    const documentId = 'FV-1';
    const xml = Buffer.from((await api(`/v1/conversions/${(await api('/v1/conversions?status=sent')).conversions[0].id}`)).xml);

    const { page } = adminEn;
    await page.getByRole('navigation').getByRole('link', { name: T.en.invoices }).click();
    await page.waitForURL('**/console/invoices');
    assert.equal(await heading(page), T.en.invoicesTitle);
    await check(page, 'invoices', 'en');
    await page.getByRole('link', { name: documentId, exact: true }).click();
    await page.waitForURL(`**/console/invoices/${invoiceId}`);
    await page.getByRole('heading', { level: 2, name: T.en.timeline }).waitFor();
    // The page, reloaded as a person would, until the buyer's acceptance has arrived
    // (the sandbox partner answers within a second).
    const statusShown = () => described(page, T.en.status).textContent();
    await waitFor("the buyer's acceptance on the invoice's page", async () => {
      if ((await statusShown()).trim() === 'accepted') return true;
      await page.reload();
      return false;
    }, { ms: 30_000, everyMs: 200 });
    // The same timeline the API gives, entry for entry, and its chain head.
    const timeline = await api(`/v1/invoices/${invoiceId}/messages`);
    assert.equal(timeline.status, 'accepted');
    const codes = (await page.locator('table.timeline tbody td:nth-child(4)').allTextContents()).map((c) => c.trim());
    assert.deepEqual(codes, timeline.events.map((e) => e.code));
    assert.ok(codes.includes('IR:AP'), `the buyer's acceptance is in the timeline: ${codes}`);
    assert.equal((await page.locator('code.hash').textContent()).trim(), timeline.chain_head);
    await check(page, 'invoice', 'en');

    const doc = await page.request.get(await page.getByRole('link', { name: T.en.documentXml }).getAttribute('href'));
    assert.equal(doc.status(), 200);
    assert.deepEqual(Buffer.from(await doc.body()), xml);
    const pdf = await page.request.get(await page.getByRole('link', { name: T.en.documentPdf }).getAttribute('href'));
    assert.equal(pdf.status(), 200);
    assert.equal((await pdf.body()).subarray(0, 5).toString(), '%PDF-');
    const zip = await page.request.get(await page.getByRole('link', { name: T.en.evidence }).getAttribute('href'));
    assert.equal(zip.status(), 200);
    assert.equal(zip.headers()['content-type'], 'application/zip');
    assert.equal((await zip.body()).subarray(0, 2).toString(), 'PK');

    // Filtered by status, in Slovak.
    const sk = adminSk.page;
    await open(sk, `/console/invoices?status=${timeline.status}`);
    assert.equal(await heading(sk), T.sk.invoicesTitle);
    assert.equal(await sk.getByRole('link', { name: documentId, exact: true }).count(), 1);
    await open(sk, '/console/invoices?status=paid');
    assert.equal(await sk.getByRole('link', { name: documentId, exact: true }).count(), 0);
    await check(sk, 'invoices', 'sk');
    await open(sk, `/console/invoices/${invoiceId}`);
    await check(sk, 'invoice', 'sk');
  });

  it('webhooks: a test event reaches the receiver and shows in the delivery log; redelivered with the same id; the secret rotated and shown once', async () => {
    // A receiver of our own on loopback: the first delivery of each event fails (500), the
    // next ones succeed, so the log shows a retry too.
    const received = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        const id = req.headers['webhook-id'];
        const seen = received.filter((r) => r.id === id).length;
        received.push({ id, signature: req.headers['webhook-signature'], body: JSON.parse(body) });
        res.writeHead(seen === 0 ? 500 : 200).end();
      });
    });
    await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${receiver.address().port}/hook`;
    try {
      const created = await fetch(`${server.base}/v1/webhooks`, {
        method: 'POST',
        headers: { 'X-API-Key': BOOTSTRAP_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url, event_types: ['webhook.test', 'invoice.accepted'], description: 'browser receiver' }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const endpoint = await created.json();

      const { page } = adminEn;
      await page.getByRole('navigation').getByRole('link', { name: T.en.webhooks }).click();
      await page.waitForURL('**/console/webhooks');
      await check(page, 'webhooks', 'en');
      await page.getByRole('link', { name: url }).click();
      await page.waitForURL(`**/console/webhooks/${endpoint.id}`);

      await submit(page, page.getByRole('button', { name: T.en.sendTest }), 200);
      assert.equal((await page.getByRole('status').textContent()).trim(), T.en.tested);
      // Delivered after one failure (the receiver's 500, then 200): both attempts logged.
      await waitFor('the test event delivered', async () => {
        await page.reload();
        const states = await page.locator('table.deliveries tbody td:nth-child(5)').allTextContents();
        return states.some((s) => s.trim() === 'delivered');
      }, { ms: 60_000, everyMs: 300 });
      const tests = received.filter((r) => r.body.type === 'webhook.test');
      assert.ok(tests.length >= 2, `${tests.length} deliveries of the test event`);
      assert.equal(new Set(tests.map((r) => r.id)).size, 1, 'one event, one webhook-id');
      const answers = (await page.locator('table.deliveries tbody td:nth-child(4)').allTextContents()).map((a) => a.trim());
      assert.ok(answers.some((a) => a.startsWith('HTTP 500')), answers.join(' | '));
      assert.ok(answers.some((a) => a.startsWith('HTTP 200')), answers.join(' | '));
      await check(page, 'webhook', 'en');

      // Redelivered: the same event (same webhook-id) arrives again.
      const before = received.length;
      await submit(page, page.getByRole('button', { name: T.en.redeliver }).first(), 200);
      assert.equal((await page.getByRole('status').textContent()).trim(), T.en.redelivered);
      await waitFor('the redelivery', () => received.length > before, { ms: 30_000 });
      assert.equal(received.at(-1).id, tests[0].id);

      // A new secret, shown once on the answer; the old one still signs for a day.
      await submit(page, page.getByRole('button', { name: T.en.rotate }), 200);
      const secret = (await page.locator('code.link').textContent()).trim();
      assert.match(secret, /^whsec_/);
      // The console's script puts a Copy button beside it (console.js; the page works
      // without it).
      await adminEn.ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      await page.getByText('Copied', { exact: true }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
      await open(page, `/console/webhooks/${endpoint.id}`);
      assert.equal(await page.locator('code.link').count(), 0, 'the secret is shown only once');
      const after = await (await fetch(`${server.base}/v1/webhooks/${endpoint.id}`, { headers: { 'X-API-Key': BOOTSTRAP_KEY } })).json();
      assert.ok(after.previous_secret_expires_at, 'the old secret overlaps');

      const sk = adminSk.page;
      await open(sk, '/console/webhooks');
      await check(sk, 'webhooks', 'sk');
      await open(sk, `/console/webhooks/${endpoint.id}`);
      await check(sk, 'webhook', 'sk');
    } finally {
      receiver.close();
    }
  });

  it('language: Accept-Language chooses Slovak or English, and the switch in the header changes it', async () => {
    for (const [accept, lang] of [['sk', 'sk'], ['en', 'en'], ['de-DE,en;q=0.5,sk;q=0.8', 'sk'], ['fr', 'sk']]) {
      const { ctx, page } = await context(undefined, { extraHTTPHeaders: { 'Accept-Language': accept } });
      await open(page, '/console/sign-in');
      assert.equal(await page.locator('html').getAttribute('lang'), lang, `Accept-Language: ${accept}`);
      assert.equal(await heading(page), T[lang].signInTitle, `Accept-Language: ${accept}`);
      assert.equal(await page.getByLabel(T[lang].password).count(), 1);
      if (accept === 'sk') await check(page, 'sign-in', 'sk');
      await ctx.close();
    }

    // The switch, on a Slovak browser: English, remembered across pages and visits.
    const { ctx, page } = await context('sk');
    await open(page, '/console/sign-in');
    assert.equal(await heading(page), T.sk.signInTitle);
    const toEn = page.getByRole('link', { name: T.sk.switchTo });
    assert.equal(await toEn.getAttribute('lang'), 'en');
    assert.equal(await toEn.getAttribute('hreflang'), 'en');
    await toEn.click();
    await page.waitForURL('**/console/sign-in?lang=en');
    assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    assert.equal(await heading(page), T.en.signInTitle);
    await open(page, '/console/sign-in');
    assert.equal(await heading(page), T.en.signInTitle, 'the choice is remembered');
    await page.getByRole('link', { name: T.en.switchTo }).click();
    await page.waitForURL('**/console/sign-in?lang=sk');
    assert.equal(await heading(page), T.sk.signInTitle);
    await ctx.close();

    // Signed in, the switch stays on the page it is on.
    const sk = adminSk.page;
    await open(sk, '/console/rules/BR-01');
    await sk.getByRole('link', { name: T.sk.switchTo }).click();
    await sk.waitForURL('**/console/rules/BR-01?lang=en');
    assert.equal(await sk.locator('html').getAttribute('lang'), 'en');
    await described(sk, T.en.message).waitFor();
    await sk.getByRole('link', { name: T.en.switchTo }).click();
    await sk.waitForURL('**/console/rules/BR-01?lang=sk');
    await described(sk, T.sk.message).waitFor();
  });

  it('CSRF: state-changing posts without the session token, with another token, or from another site are refused', async () => {
    const { page } = adminEn;
    await open(page, '/console/people');
    const csrf = await page.locator('form[action="/console/people"] input[name=csrf]').inputValue();
    assert.match(csrf, /^[A-Za-z0-9_-]{20,}$/);
    const post = (path, form, headers = {}) =>
      page.request.post(path, { form, headers: { 'Accept-Language': 'en', ...headers }, maxRedirects: 0 });

    const without = await post('/console/people', { email: 'no-token@example.sk', role: 'admin' });
    // A form without the field at all is refused like a wrong token (docs/console.md).
    assert.equal(without.status(), 403, `without a token: ${without.status()}`);
    const wrong = await post('/console/people', { csrf: 'x'.repeat(43), email: 'wrong-token@example.sk', role: 'admin' });
    assert.equal(wrong.status(), 403);
    assert.match(await wrong.text(), new RegExp(T.en.refusedCsrf));
    const crossSite = await post(
      '/console/people',
      { csrf, email: 'cross-site@example.sk', role: 'admin' },
      { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' },
    );
    assert.equal(crossSite.status(), 403);
    assert.match(await crossSite.text(), new RegExp(T.en.refusedCrossSite));

    for (const path of ['/console/sign-out', '/console/sign-out-everywhere']) {
      const bare = await post(path, {});
      assert.equal(bare.status(), 403, `${path} without a token: ${bare.status()}`);
      const forged = await post(path, { csrf: 'forged' });
      assert.equal(forged.status(), 403, `${path} with another token`);
    }

    // Nothing happened: no invitation, and both sessions of the admin still live.
    await open(page, '/console/people');
    for (const who of ['no-token', 'wrong-token', 'cross-site']) {
      assert.equal(await page.getByRole('cell', { name: `${who}@example.sk` }).count(), 0, who);
    }
    await open(adminSk.page, '/console');
    assert.equal(new URL(adminSk.page.url()).pathname, '/console');

    // With the page's own token the same request goes through (so the refusals were for the token).
    const ok = await post('/console/people', { csrf, email: 'auditor@example.sk', role: 'auditor' });
    assert.equal(ok.status(), 201);
  });

  it('keyboard: the sign-in form is completed with Tab and Enter only', async () => {
    const { ctx, page } = await context('en');
    await open(page, '/console/sign-in');
    await page.keyboard.press('Tab');
    const active = () => page.evaluate(() => {
      const e = document.activeElement;
      return { tag: e.tagName.toLowerCase(), id: e.id, text: e.textContent.trim() };
    });
    // The first stop is the skip link, shown when focused.
    assert.equal((await active()).text, T.en.skip);
    const box = await page.getByRole('link', { name: T.en.skip }).boundingBox();
    assert.ok(box && box.x >= 0 && box.y >= 0, `the focused skip link is on screen: ${JSON.stringify(box)}`);
    const order = [];
    for (let i = 0; i < 10 && (await active()).id !== 'email'; i++) {
      order.push(await active());
      await page.keyboard.press('Tab');
    }
    assert.equal((await active()).id, 'email', `Tab order before the address: ${JSON.stringify(order)}`);
    await page.keyboard.type(ADMIN.email);
    await page.keyboard.press('Tab');
    assert.equal((await active()).id, 'password');
    await page.keyboard.type(ADMIN.password);
    await Promise.all([page.waitForURL('**/console'), page.keyboard.press('Enter')]);
    assert.equal(await heading(page), T.en.homeTitle);

    // Skip link: Enter moves the focus into the main content.
    await page.keyboard.press('Tab');
    assert.equal((await active()).text, T.en.skip);
    await page.keyboard.press('Enter');
    assert.equal((await active()).id, 'content');
    await ctx.close();
  });

  it('sign out ends this session; sign out everywhere ends the other browsers’ too', async () => {
    // Sign out: adminEn's session ends, adminSk's (another session of the same person) lives.
    const { page, ctx } = adminEn;
    await open(page, '/console');
    await submit(page, page.getByRole('navigation').getByRole('button', { name: T.en.signOut }), 200);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    assert.equal(await sessionCookie(ctx), undefined);
    await open(page, '/console/rules');
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    await open(adminSk.page, '/console');
    assert.equal(new URL(adminSk.page.url()).pathname, '/console');

    // A second browser signed in as the same person.
    const other = await context('en');
    await open(other.page, '/console/sign-in');
    await other.page.getByLabel(T.en.email).fill(ADMIN.email);
    await other.page.getByLabel(T.en.password).fill(ADMIN.password);
    await submit(other.page, other.page.getByRole('main').getByRole('button', { name: T.en.signIn }), 200);
    assert.equal(new URL(other.page.url()).pathname, '/console');
    const staleCsrf = await other.page.locator('input[name=csrf]').first().inputValue();

    // Everywhere, from the Slovak browser.
    const sk = adminSk.page;
    await submit(sk, sk.getByRole('button', { name: T.sk.signOutEverywhere }), 200);
    assert.equal(new URL(sk.url()).pathname + new URL(sk.url()).search, '/console/sign-in?signed_out=everywhere');
    assert.equal((await sk.getByRole('status').textContent()).trim(), T.sk.signedOutEverywhere);
    await check(sk, 'signed-out-everywhere', 'sk');

    // The other browser still has its cookie, but its session has ended.
    assert.ok(await sessionCookie(other.ctx));
    await open(other.page, '/console');
    assert.equal(new URL(other.page.url()).pathname, '/console/sign-in');
    const late = await other.page.request.post('/console/sign-out-everywhere', { form: { csrf: staleCsrf }, maxRedirects: 0 });
    assert.equal(late.status(), 303);
    assert.equal(late.headers().location, '/console/sign-in');
    await other.ctx.close();
  });

  it('accessibility: axe-core checked every main page in both languages', () => {
    const pages = ['sign-in', 'set-password', 'home', 'people', 'rules', 'rule', 'validate', 'review', 'review-detail', 'invoices', 'invoice', 'webhooks', 'webhook', 'connections'];
    const missing = pages.flatMap((p) => ['sk', 'en'].map((l) => `${p}.${l}`)).filter((k) => !checked.has(k));
    assert.deepEqual(missing, []);
  });

  it('sign-in through the organisation\'s OpenID provider maps its groups to roles', async () => {
    // What the single sign-on screens say (server/src/routes/console/i18n.rs).
    const S = {
      en: { nav: 'Single sign-on', save: 'Save', workEmail: 'Work e-mail', start: 'Continue with single sign-on' },
      sk: { nav: 'Jednotné prihlásenie', save: 'Uložiť', workEmail: 'Pracovný e-mail' },
    };
    // The organisation's provider (oidc-provider, in this process) at http://localhost:PORT,
    // another site than invex at 127.0.0.1; invex is its one client. Anna's group maps to a
    // role, Bob's to none.
    const redirectUri = `${server.base}/console/sso/callback`;
    const client = { clientId: 'invex-browser-e2e', clientSecret: 'browser-e2e-client-secret-0000000001' };
    const provider = await startProvider({
      redirectUri,
      ...client,
      accounts: {
        'anna@sso.example': { email: 'anna@sso.example', email_verified: true, name: 'Anna Nováková', groups: ['invex-accountants'] },
        'bob@sso.example': { email: 'bob@sso.example', email_verified: true, name: 'Bob Visitor', groups: ['visitors'] },
      },
    });
    /**
     * A browser for a person of the organisation. The provider's own pages ask for a web
     * font; it is answered empty here, so that the test reaches nothing outside the machine.
     */
    const personContext = async () => {
      const person = await context('en');
      await person.ctx.route((url) => url.hostname === 'fonts.googleapis.com',
        (route) => route.fulfill({ status: 200, contentType: 'text/css', body: '' }));
      return person;
    };
    /**
     * From invex's sign-in page through the provider (its development sign-in: the login
     * name, any password; then consent) until the browser comes back to invex's callback,
     * whose response is returned. Console errors of the provider's pages are not invex's.
     */
    const throughProvider = async (page, email) => {
      await open(page, '/console/sign-in');
      const sso = page.locator('form#sso');
      assert.equal((await sso.getAttribute('method')).toLowerCase(), 'get');
      assert.equal(await sso.getAttribute('action'), '/console/sso');
      await sso.getByLabel(S.en.workEmail).fill(email);
      await Promise.all([
        page.waitForURL((u) => u.origin === provider.issuer && u.pathname.startsWith('/interaction/')),
        sso.getByRole('button', { name: S.en.start }).click(),
      ]);
      await page.locator('input[name=login]').fill(email);
      await page.locator('input[name=password]').fill('any password the provider accepts');
      const login = page.url();
      await Promise.all([
        page.waitForURL((u) => u.origin === provider.issuer && u.pathname.startsWith('/interaction/') && u.href !== login),
        page.getByRole('button', { name: 'Sign-in' }).click(),
      ]);
      const [callback] = await Promise.all([
        page.waitForResponse((r) => r.url().startsWith(`${redirectUri}?`) && r.request().isNavigationRequest()),
        page.getByRole('button', { name: 'Continue' }).click(),
      ]);
      const theirs = page.problems.take().filter((p) => !p.includes(provider.issuer));
      assert.deepEqual(theirs, [], `console errors on the way through the provider`);
      return callback;
    };

    try {
      // The administrator (signed out everywhere by the story so far) signs in again.
      const admin = await context('en');
      const { page } = admin;
      await open(page, '/console/sign-in');
      const passwordForm = page.locator('main form').filter({ has: page.getByLabel(T.en.password) });
      await passwordForm.getByLabel(T.en.email).fill(ADMIN.email);
      await passwordForm.getByLabel(T.en.password).fill(ADMIN.password);
      await submit(page, passwordForm.getByRole('button', { name: T.en.signIn, exact: true }), 200);
      assert.equal(new URL(page.url()).pathname, '/console');

      // The screen, from the administration's link.
      await open(page, '/console/people');
      await page.getByRole('link', { name: S.en.nav, exact: true }).first().click();
      await page.waitForURL('**/console/settings/sso');
      const form = page.locator('main form').filter({ has: page.locator('[name=issuer]') });
      const field = (name) => form.locator(`[name="${name}"]`);
      const fields = ['issuer', 'client_id', 'client_secret', 'domains', 'scopes', 'role_claim', 'role_map', 'default_role', 'required'];
      for (const name of fields) {
        assert.equal(await field(name).count(), 1, `the form has ${name}`);
        assert.ok(await field(name).evaluate((e) => e.labels.length > 0), `${name} has a label`);
      }
      assert.equal(await field('csrf').count(), 1, 'the form carries its CSRF token');
      assert.equal(await field('role_map').evaluate((e) => e.tagName.toLowerCase()), 'textarea');
      await check(page, 'sso-settings', 'en');

      // Refused without the page's token, like every form.
      const forged = await page.request.post('/console/settings/sso', {
        form: { issuer: provider.issuer, client_id: 'forged', client_secret: 'forged', domains: 'sso.example', role_claim: 'groups', role_map: 'invex-accountants=admin', default_role: 'admin' },
        maxRedirects: 0,
      });
      assert.equal(forged.status(), 403);

      await field('issuer').fill(provider.issuer);
      await field('client_id').fill(client.clientId);
      await field('client_secret').fill(client.clientSecret);
      await field('domains').fill('sso.example');
      await field('scopes').fill('email profile groups');
      await field('role_claim').fill('groups');
      await field('role_map').fill('invex-accountants=accountant\ninvex-admins=admin');
      await field('default_role').selectOption('');
      await field('required').setChecked(false);
      await submit(page, form.getByRole('button', { name: S.en.save, exact: true }), 200);
      assert.ok((await page.getByRole('status').textContent()).trim().length > 0, 'the saving is confirmed');
      assert.equal((await page.locator('#sso-redirect-uri').textContent()).trim(), redirectUri);
      assert.equal(await field('issuer').inputValue(), provider.issuer);
      assert.equal(await field('domains').inputValue(), 'sso.example');
      await check(page, 'sso-settings-saved', 'en');

      // The same screen in Slovak.
      await open(page, '/console/settings/sso?lang=sk');
      assert.ok(await page.getByRole('link', { name: S.sk.nav, exact: true }).count() >= 1);
      assert.equal(await page.getByRole('button', { name: S.sk.save, exact: true }).count(), 1);
      assert.equal((await page.locator('#sso-redirect-uri').textContent()).trim(), redirectUri);
      await check(page, 'sso-settings', 'sk');
      await open(page, '/console/settings/sso?lang=en');

      await submit(page, page.getByRole('navigation').getByRole('button', { name: T.en.signOut }), 200);
      assert.equal(new URL(page.url()).pathname, '/console/sign-in');
      // The sign-in page offers single sign-on, in both languages.
      assert.equal(await page.locator('form#sso').getByLabel(S.en.workEmail).count(), 1);
      await check(page, 'sign-in', 'en');
      await open(page, '/console/sign-in?lang=sk');
      assert.equal(await page.locator('form#sso').getByLabel(S.sk.workEmail).count(), 1);
      await check(page, 'sign-in', 'sk');
      await admin.ctx.close();

      // Anna, of the accountants' group, comes back from the provider an accountant.
      const anna = await personContext();
      const back = await throughProvider(anna.page, 'anna@sso.example');
      assert.equal(back.status(), 200, `the callback answered ${back.status()}`);
      assertSecured(back);
      await anna.page.waitForURL((u) => u.origin === server.base && u.pathname === '/console');
      assert.equal(await heading(anna.page), T.en.homeTitle);
      assert.equal((await described(anna.page, T.en.signedInAs).textContent()).trim(), 'anna@sso.example');
      assert.equal((await described(anna.page, T.en.role).textContent()).trim(), T.en.accountant);
      const cookie = await sessionCookie(anna.ctx);
      assert.ok(cookie, 'the session cookie is set');
      assert.equal(cookie.sameSite, 'Strict');
      assert.equal(await anna.page.getByRole('navigation').getByRole('link', { name: T.en.people }).count(), 0);
      await check(anna.page, 'home-sso', 'en');
      await open(anna.page, '/console/people', 403);
      assert.equal((await anna.page.getByRole('alert').textContent()).trim(), T.en.forbidden);
      await anna.ctx.close();

      // Bob's groups map to no role and there is no default one: refused, and not signed in.
      const bob = await personContext();
      const refused = await throughProvider(bob.page, 'bob@sso.example');
      assert.equal(refused.status(), 403, `the callback answered ${refused.status()}`);
      assertSecured(refused);
      assert.equal(new URL(bob.page.url()).pathname, '/console/sso/callback');
      assert.match(await bob.page.locator('main').textContent(), /role/i);
      assert.equal(await sessionCookie(bob.ctx), undefined);
      await check(bob.page, 'sso-refused', 'en');
      await open(bob.page, '/console');
      assert.equal(new URL(bob.page.url()).pathname, '/console/sign-in');
      await bob.ctx.close();
    } finally {
      await provider.close();
    }
  });
});
