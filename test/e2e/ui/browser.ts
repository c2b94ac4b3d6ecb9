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
 * a fresh temporary profile (its own --user-data-dir), so none is passed here.
 */
export async function launchBrowser(t: TestContext): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage',
    ],
  });
  t.after(async () => {
    await browser.close().catch(() => undefined);
  });
  return browser;
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

/** A step of a browser scenario (a subtest); on failure the page is saved as a screenshot next to the others. */
export function stepper(t: TestContext, page: Page, prefix = '') {
  let n = 0;
  return (name: string, fn: () => Promise<void>) => t.test(name, async () => {
    n++;
    try {
      await fn();
    } catch (err) {
      await screenshot(page, `${prefix}failed-step-${n}`).catch(() => undefined);
      throw err;
    }
  });
}
