/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser, on its DOM.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type KeyInput, type Page } from 'puppeteer-core';
import { eventually } from './eventually.js';

/** The headless Chromium `make test` installs (scripts/services/chromium.sh). */
export function testChromium(): string {
  const browser = process.env.TEST_CHROMIUM;
  if (!browser) throw new Error('TEST_CHROMIUM is not set: run the tests with `make test`');
  return browser;
}

/** A real headless Chromium for the calling describe block, with a folder its downloads land in. */
export interface TestBrowser {
  readonly page: () => Page;
  /** The page's script errors and console errors so far. */
  readonly errors: () => string[];
  /** Waits for a file to be downloaded whole into the folder, and returns its name and text. */
  downloaded(name: RegExp): Promise<{ name: string; text: string }>;
}

export function useBrowser(viewport = { width: 1280, height: 800 }): TestBrowser {
  let browser: Browser | undefined;
  let page: Page | undefined;
  const downloads = mkdtempSync(path.join(tmpdir(), 'console-downloads-'));
  const errors: string[] = [];
  /** Downloads that completed, by file name. */
  const completed = new Set<string>();

  before(async function () {
    this.timeout(60_000);
    browser = await puppeteer.launch({
      executablePath: testChromium(),
      headless: true,
      // The service's certificate is its own (self-signed); the tests run as root.
      args: ['--no-sandbox', '--ignore-certificate-errors', '--disable-dev-shm-usage'],
      acceptInsecureCerts: true,
    });
    page = await browser.newPage();
    page.on('pageerror', (err) => errors.push(String(err)));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.setViewport(viewport);
    const cdp = await page.createCDPSession();
    // A file is read once Chromium says its download completed: the file of that name exists, and
    // may still be empty, before then.
    const names = new Map<string, string>();
    cdp.on('Browser.downloadWillBegin', (event) => names.set(event.guid, event.suggestedFilename));
    cdp.on('Browser.downloadProgress', (event) => {
      const name = names.get(event.guid);
      if (event.state === 'completed' && name !== undefined) completed.add(name);
    });
    await cdp.send('Browser.setDownloadBehavior', {
      behavior: 'allow',
      downloadPath: downloads,
      eventsEnabled: true,
    });
  });

  after(async () => {
    await browser?.close();
    rmSync(downloads, { recursive: true, force: true });
  });

  return {
    errors: () => [...errors],
    page: () => {
      if (!page) throw new Error('the browser is not started yet');
      return page;
    },
    async downloaded(name) {
      const found = await eventually(
        async () => [...completed].find((f) => name.test(f)),
        (f) => f !== undefined,
        30,
        100,
      );
      if (!found) throw new Error(`no download named ${name} in ${readdirSync(downloads).join(', ')}`);
      return { name: found, text: readFileSync(path.join(downloads, found), 'utf8') };
    },
  };
}

/** The text of the element `selector` once it holds `expected` (30 s at most). */
export async function textOnceIn(page: Page, selector: string, expected: RegExp): Promise<string> {
  const text = await eventually(
    () => page.$eval(selector, (e) => (e as HTMLElement).innerText).catch(() => ''),
    (t) => expected.test(t),
    60,
    100,
  );
  if (!expected.test(text)) throw new Error(`${selector} never showed ${expected}; it shows: ${text}`);
  return text;
}

/**
 * Presses `key` on the focused element and answers the file chooser it opens with `file`. The
 * chooser is intercepted, and Chromium has acknowledged that, before the key goes down: puppeteer's
 * `waitForFileChooser` sends the interception without waiting for it, and a chooser that opens
 * first is cancelled unseen.
 */
export async function chooseFileWithKey(page: Page, key: KeyInput, file: string): Promise<void> {
  const cdp = await page.createCDPSession();
  try {
    await cdp.send('Page.enable');
    await cdp.send('Page.setInterceptFileChooserDialog', { enabled: true });
    const opened = new Promise<number>((resolve, reject) =>
      cdp.once('Page.fileChooserOpened', ({ backendNodeId }) =>
        backendNodeId === undefined
          ? reject(new Error('the file chooser names no input'))
          : resolve(backendNodeId),
      ),
    );
    await page.keyboard.press(key);
    let timer: NodeJS.Timeout | undefined;
    const backendNodeId = await Promise.race([
      opened,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`pressing ${key} opened no file chooser`)), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    await cdp.send('DOM.setFileInputFiles', { files: [file], backendNodeId });
  } finally {
    await cdp.detach();
  }
}

/** Presses Tab until the element with this id has the focus: it is reachable by keyboard. */
export async function tabTo(page: Page, id: string): Promise<void> {
  for (let n = 0; n < 80; n++) {
    if ((await page.evaluate(() => document.activeElement?.id)) === id) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`#${id} cannot be reached with Tab`);
}

/** axe-core's browser build, read once. */
let axeSource: string | undefined;

/**
 * The accessibility rules of WCAG 2 A and AA that the page breaks, as axe-core finds them in the
 * page's current state: each rule's id and the elements that break it. Evaluated over the DevTools
 * protocol, so the page's Content-Security-Policy does not stop it.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run: (context: Document, options: object) => Promise<AxeResults> } }
    ).axe;
    const results = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
    return results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return violations;
}

interface AxeResults {
  violations: { id: string; nodes: { target: string[] }[] }[];
}
