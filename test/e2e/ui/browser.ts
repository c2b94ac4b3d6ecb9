// UI test helpers: Debian's headless Chromium driven by playwright-core (never a downloaded browser), screenshots.
import { chromium, type Browser, type Page } from 'playwright-core';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { CHROMIUM } from '../../helpers/tools.ts';

export { CHROMIUM };
export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'ui');

/**
 * Starts headless Chromium; it must not try to reach the internet (the CI box refuses). playwright gives every launch
 * a fresh temporary profile (its own --user-data-dir), so none is passed here. The browser is closed after the test
 * even when the test fails before awaiting it, so a test may start it first and set up its server meanwhile.
 */
export function launchBrowser(t: TestContext): Promise<Browser> {
  const launched = chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage',
    ],
  });
  t.after(async () => {
    const browser = await launched.catch(() => undefined);
    await browser?.close().catch(() => undefined);
  });
  return launched;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  // From the top, so the sticky header sits where it belongs in a full-page picture.
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Collects page errors so a test can assert the UI never threw. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(msg.text());
  });
  return errors;
}

/** The little of the DOM the page functions below use (the tests are compiled without the DOM library). */
interface PageGlobals {
  document: {
    querySelector(selector: string): { getAttribute(name: string): string | null; textContent: string | null } | null;
    activeElement: { textContent: string | null } | null;
  };
}

/**
 * Waits until the number shown by the first element matching `selector` (its text, or the attribute `attr`) lies in
 * (above, below). The check runs inside the page every 50 ms: no round trip to the test per look, no fixed sleep.
 */
export async function waitForNumber(
  page: Page, selector: string, range: { attr?: string; above?: number; below?: number }, timeout?: number,
): Promise<void> {
  await page.waitForFunction(({ selector, attr, above, below }) => {
    const el = (globalThis as unknown as PageGlobals).document.querySelector(selector);
    if (!el) return false;
    const n = parseFloat((attr ? el.getAttribute(attr) : el.textContent) ?? '');
    return n > (above ?? -Infinity) && n < (below ?? Infinity);
  }, { selector, ...range }, { polling: 50, timeout });
}

/** Waits until the focused element's text is `text` (a dialog moves the focus from an effect, just after it appears). */
export async function waitForFocus(page: Page, text: string): Promise<void> {
  await page.waitForFunction((text) => (globalThis as unknown as PageGlobals).document.activeElement?.textContent === text, text, { polling: 50 })
    .catch(async (err: unknown) => {
      throw new Error(`the focus is on "${await page.evaluate<string>('document.activeElement?.textContent ?? ""')}", not "${text}": ${String(err)}`);
    });
}

/**
 * A step of a browser scenario (a subtest); on failure the page is saved as a screenshot next to the others. Each step
 * starts from the page the one before left, so after a failure the later steps are skipped: run on a page left in the
 * wrong state (a dialog still open), each of them used to wait out its own 20 s timeout.
 */
export function stepper(t: TestContext, page: Page, prefix = '') {
  let n = 0;
  let failed: string | undefined;
  return (name: string, fn: () => Promise<void>) => t.test(name, async (st) => {
    n++;
    if (failed) return st.skip(`step ${failed} failed`);
    try {
      await fn();
    } catch (err) {
      failed = String(n);
      await screenshot(page, `${prefix}failed-step-${n}`).catch(() => undefined);
      throw err;
    }
  });
}

/** Polls a condition read from the page (the test runs in Node, so page values are read through locators). */
export async function until(what: string, check: () => Promise<boolean>, timeout = 40_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Resizes the page and waits for the UI's layout to follow (the phone layout, with its bottom bar, at 820 px and less):
 * the UI takes a width once it has settled, so a click right after a resize could aim at the other layout.
 */
export async function resizeTo(page: Page, width: number, height: number): Promise<void> {
  await page.setViewportSize({ width, height });
  await page.getByTestId('bottom-bar').waitFor({ state: width <= 820 ? 'visible' : 'hidden' });
}

/**
 * Opens one of the pages by its exact name: a tab on a wide screen; on a phone a button of the bottom bar, or an item
 * of its "More" menu.
 */
export async function openTab(page: Page, name: string): Promise<void> {
  const bar = page.getByTestId('bottom-bar');
  if (await bar.isVisible()) {
    const direct = bar.getByRole('button', { name, exact: true });
    if (await direct.count()) {
      await direct.click();
    } else {
      await bar.getByRole('button', { name: 'More', exact: true }).click();
      await page.getByRole('menu', { name: 'More pages' }).getByRole('menuitem', { name, exact: true }).click();
    }
    return;
  }
  await page.getByRole('tab', { name, exact: true }).click();
}

/** Logs in through the login page, as a user does (the caller waits for what the page shows next). */
export async function logIn(page: Page, url: string, name: string, password: string): Promise<void> {
  await page.goto(url + '/login');
  await page.getByLabel('User name').fill(name);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** The script files the page fetches from now on: a lazily loaded page's code shows up only once it is opened. */
export function scriptsFetched(page: Page): string[] {
  const scripts: string[] = [];
  page.on('request', (r) => { if (r.resourceType() === 'script') scripts.push(r.url()); });
  return scripts;
}
