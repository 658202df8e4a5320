import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { projectRoot } from '../../src/project-root';
import { TestServer, type Clients, type TestServerOptions } from './test-server';

/** Debian's chromium (scripts/ensure-chromium.mjs installs it); never a browser Playwright downloads. */
const CHROMIUM = process.env['OJS_TEST_CHROMIUM'] || '/usr/bin/chromium';

/** Where the dashboard tests save a screenshot of each page (git-ignored). */
export const SCREENSHOT_DIR = join(projectRoot(), 'test-artifacts', 'dashboard');

/**
 * A headless chromium with a fresh profile of its own, for driving the
 * dashboard like an operator would. close() stops the browser (Playwright
 * stops the process it started) and removes the profile.
 */
export class DashboardBrowser {
  private constructor(
    private readonly context: BrowserContext,
    private readonly profileDir: string,
  ) {}

  static async launch(): Promise<DashboardBrowser> {
    const profileDir = mkdtempSync(join(tmpdir(), 'ojs-chromium-'));
    const context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1280, height: 800 },
    });
    return new DashboardBrowser(context, profileDir);
  }

  /** A new tab at `url`, accepting every confirmation dialog (the tests click through them). */
  async open(url: string): Promise<Page> {
    const page = await this.context.newPage();
    // A dialog that cannot be accepted leaves the test waiting on the DOM, which fails it with what it waited for.
    page.on('dialog', (dialog) => {
      dialog.accept().catch(() => undefined);
    });
    await page.goto(url);
    return page;
  }

  async close(): Promise<void> {
    await this.context.close();
    rmSync(this.profileDir, { recursive: true, force: true });
  }
}

/** Saves a full-page screenshot as test-artifacts/dashboard/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** What the dashboard tests of one file share: a server with its dashboard, clients, a browser, the dashboard's address. */
export interface SharedDashboard {
  readonly server: TestServer;
  readonly clients: Clients;
  readonly browser: DashboardBrowser;
  readonly url: string;
}

/** Starts a server with its dashboard and a browser before the tests of the file, and stops both after them. */
export function shareDashboard(options: TestServerOptions = {}): SharedDashboard {
  let shared: SharedDashboard | undefined;
  let server: TestServer | undefined;
  let browser: DashboardBrowser | undefined;
  beforeAll(async () => {
    server = await TestServer.start({ ...options, dashboardPort: 0 });
    browser = await DashboardBrowser.launch();
    shared = { server, clients: server.connect(), browser, url: `http://127.0.0.1:${server.server.dashboard!.port}/` };
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  const started = (): SharedDashboard => {
    if (shared === undefined) throw new Error('the shared dashboard starts in beforeAll');
    return shared;
  };
  return {
    get server() {
      return started().server;
    },
    get clients() {
      return started().clients;
    },
    get browser() {
      return started().browser;
    },
    get url() {
      return started().url;
    },
  };
}
