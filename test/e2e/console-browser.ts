// The browser side of the console's e2e suites: Debian's Chromium driven by puppeteer-core, a screenshot per
// step (saved under test-results/console/ for a reviewer, checked not to be blank), and waiting on what a
// user reads.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { expect } from 'vitest';
import { pngCensus } from './screenshot-check.ts';

const SCREENSHOTS = join(process.cwd(), 'test-results', 'console');
const CHROMIUM = process.env.KUBELOOP_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  await mkdir(SCREENSHOTS, { recursive: true });
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'], defaultViewport: { width: 1366, height: 900 } });
}

/** Saves the page for a reviewer and checks it shows something: several colours, some ink on the background. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOTS, `${name}.png`);
  const png = await page.screenshot({ path, type: 'png', fullPage: true });
  const census = pngCensus(png);
  expect(census.colours, `${path}: distinct colours`).toBeGreaterThan(8);
  expect(census.inked, `${path}: share of non-background pixels`).toBeGreaterThan(0.01);
  return path;
}

/** Waits until the page's visible text holds every string. */
export async function waitForText(page: Page, texts: string[], timeout = 90_000): Promise<void> {
  await page.waitForFunction((wanted: string[]) => wanted.every((t) => document.body.innerText.includes(t)), { timeout, polling: 250 }, texts);
}
