// Opens a URL in headless Chromium and saves a full-page screenshot (a look at the page by hand).
// usage: node shot.mjs URL OUT.png [DOMAIN] [WAIT_MS]
import { chromium } from 'playwright-core';
import { execSync } from 'node:child_process';
const [url, out, domain, wait] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || execSync('command -v chromium').toString().trim(),
  args: ['--headless=new', '--no-sandbox', '--disable-gpu-sandbox', '--disable-dev-shm-usage',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const page = await browser.newPage({ viewport: { width: 1500, height: 1100 } });
page.on('console', (m) => console.log('console:', m.type(), m.text()));
page.on('pageerror', (e) => console.log('pageerror:', String(e)));
await page.goto(url);
await page.waitForTimeout(1500);
if (domain) { await page.click(`[data-testid=domain-${domain}]`); }
await page.waitForTimeout(Number(wait || 1500));
await page.screenshot({ path: out, fullPage: true });
await browser.close();
