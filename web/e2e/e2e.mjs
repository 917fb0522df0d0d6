// End-to-end test of the web playground: headless Chromium (Debian's, driven by
// playwright-core) loads the app from `agentworld serve`, runs one Android and one Web step on
// the demo model, and checks the rendered nodes; screenshots go to OUT_DIR.
//
// usage: node e2e.mjs BASE_URL OUT_DIR        (CHROMIUM=path overrides the browser)
import { chromium } from 'playwright-core';
import { execSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [base, outDir] = process.argv.slice(2);
if (!base || !outDir) {
  console.error('usage: node e2e.mjs BASE_URL OUT_DIR');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const executablePath = process.env.CHROMIUM || execSync('command -v chromium').toString().trim();
const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: [
    '--headless=new', '--no-sandbox', '--disable-gpu-sandbox', '--disable-dev-shm-usage',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--no-first-run', '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader',
  ], // playwright gives each launch a fresh temporary profile (--user-data-dir)
});

let failures = 0;
function check(cond, what) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) failures++;
}

const page = await browser.newPage({ viewport: { width: 1500, height: 1100 } });
const pageErrors = [];
const dialogs = [];
page.on('pageerror', (e) => pageErrors.push(String(e)));
// Console errors count, except the CSP refusing what a hostile page asks for (that is the
// point of the CSP) and 404s of resources a hostile page names.
page.on('console', (m) => {
  const t = m.text();
  if (m.type() === 'error' && !t.includes('Content Security Policy') && !t.includes('404')) pageErrors.push(t);
});
page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });

const STEP_TIMEOUT = 180_000;
const count = (sel) => page.locator(sel).count();
const text = (sel) => page.locator(sel).first().innerText();
const steps = async () => {
  const s = await text('[data-testid=status]');
  const m = s.match(/(\d+) step/);
  return m ? Number(m[1]) : -1;
};
async function runStep() {
  const before = await steps();
  await page.click('[data-testid=run]');
  await page.waitForFunction(
    (n) => {
      const s = document.querySelector('[data-testid=status]')?.textContent ?? '';
      const err = document.querySelector('[data-testid=error]');
      return err || s.includes(`${n + 1} step`);
    },
    before,
    { timeout: STEP_TIMEOUT },
  );
  const err = await count('[data-testid=error]');
  if (err) console.log('error on the page:', await text('[data-testid=error]'));
  return err === 0;
}

await page.goto(base + '/');
await page.waitForSelector('[data-testid=screen-before] .node', { timeout: 60_000 });

// --- Android: the settings screen, typed into the search field by clicking it first.
check((await count('[data-testid=screen-before] .node')) > 10, 'android: the phone draws the UI dump');
check(
  (await page.locator('[data-testid=screen-before] .node', { hasText: 'Wi' }).count()) > 0,
  'android: the Wi-Fi row is drawn',
);
await page.locator('[data-testid=screen-before] .node.k-edit').first().click();
const tapped = await page.inputValue('[data-testid=action]');
check(tapped.includes('"tap"'), `android: clicking the search field composes ${tapped}`);
check(await runStep(), 'android: the step ran without an error');
const thinking = await text('[data-testid=thinking]');
check(thinking.trim().length > 0, `android: the thinking streamed (${thinking.trim().slice(0, 80)}…)`);
const afterNodes = await count('[data-testid=screen-after] .node');
const rawAfter = await count('[data-testid=raw-after]');
// The demo model loses this screen's copy on line 33 (README, "The demo model"): a prediction
// that does not parse is shown as its raw text, which is what this checks then.
check(afterNodes > 0 || rawAfter > 0, `android: the predicted screen is drawn, or its raw text (${afterNodes} nodes, raw fallback ${rawAfter})`);
check((await count('[data-testid=screen-before] .node')) > 10, 'android: the state before stays beside it');
check((await count('[data-testid=changes]')) === 1, 'android: the change list is shown');
await page.screenshot({ path: join(outDir, 'android.png'), fullPage: true });

// Undo brings the state before back; export has one row per step.
const exported = decodeURIComponent((await page.getAttribute('[data-testid=export]', 'href')).split(',')[1]);
const row = JSON.parse(exported.trim().split('\n')[0]);
check(row.task === 'android' && row.turn_idx === 1 && row.prompt.length === 1, 'android: export is one AgentWorldBench row');
await page.click('[data-testid=undo]');
check((await steps()) === 0 && (await count('[data-testid=screen-after]')) === 0, 'android: undo goes back');

// --- Web: the tea shop page, a click on "Remove".
await page.click('[data-testid=domain-web]');
await page.waitForSelector('[data-testid=page-before]', { timeout: 30_000 });
await page.waitForFunction(() => (document.querySelector('[data-testid=page-before]')?.getAttribute('srcdoc') ?? '').includes('Green Leaf'));
const frame = page.locator('[data-testid=page-before]');
check((await frame.getAttribute('sandbox')) === '', 'web: the page is in an iframe with sandbox=""');
const inner = page.frameLocator('[data-testid=page-before]');
// A loaded CI machine can take a while to lay the frame out: wait up to 30 s, and say what the
// frame held if the button never shows, rather than dying on an uncaught timeout.
try {
  await inner.locator('button', { hasText: 'Checkout' }).waitFor({ timeout: 30_000 });
  check(true, 'web: the page before renders its Checkout button');
} catch (e) {
  const body = await inner.locator('body').innerHTML({ timeout: 5_000 }).catch((err) => `(no body: ${err.message})`);
  check(false, `web: the page before renders its Checkout button (${e.message.split('\n')[0]}; frame body: ${body.slice(0, 300)})`);
}
check((await inner.locator('button', { hasText: 'Remove' }).count()) === 2, 'web: the page renders its two Remove buttons');
await page.locator('[data-testid=tree-before] li', { hasText: '#27' }).first().click();
check((await page.inputValue('[data-testid=action]')) === "click('27')", 'web: clicking bid 27 in the DOM tree composes click(\'27\')');
check(await runStep(), 'web: the step ran without an error');
check((await count('[data-testid=page-after]')) === 1, 'web: the predicted page is drawn in a second frame');
check((await page.locator('[data-testid=page-after]').getAttribute('sandbox')) === '', 'web: the predicted page is sandboxed too');
check((await text('[data-testid=output]')).length > 0, 'web: the answer streamed');
const box = await page.locator('[data-testid=page-before]').boundingBox();
check(box && box.width > 300, `web: the page before is drawn wide enough (${box && Math.round(box.width)} px)`);
await page.screenshot({ path: join(outDir, 'web.png'), fullPage: true });

// --- Untrusted HTML renders inert: scripts, handlers and javascript: URLs are gone.
const evil = '<html><body><h1 bid="1" onmouseover="alert(1)">Hi</h1><script>alert(2)</script>' +
  '<img bid="2" src="x" onerror="alert(3)"><a bid="3" href="javascript:alert(4)">link</a>' +
  `<p bid="4" title="${'x'.repeat(5000)}">big</p><iframe srcdoc="<script>alert(5)</script>"></iframe></body></html>`;
await page.click('[data-testid=domain-web]');
// Wait for the example the domain switch loads, so it cannot land after the pasted page.
await page.waitForFunction(() => (document.querySelector('[data-testid=page-before]')?.getAttribute('srcdoc') ?? '').includes('Green Leaf'));
await page.evaluate(() => document.querySelector('details.state-text').open = true);
await page.fill('[data-testid=state]', evil);
await page.locator('[data-testid=state]').dispatchEvent('change');
await page.waitForFunction(() => (document.querySelector('[data-testid=page-before]')?.getAttribute('srcdoc') ?? '').includes('Hi'));
const doc = (await frame.getAttribute('srcdoc')).toLowerCase();
for (const bad of ['<script', 'onmouseover', 'onerror', 'javascript:', 'xxxxxxxxxx', '<iframe']) {
  check(!doc.includes(bad), `untrusted: ${bad} is not in the frame`);
}
await page.frameLocator('[data-testid=page-before]').locator('h1').hover();
await page.waitForTimeout(300);
check(dialogs.length === 0, `untrusted: no script ran (dialogs: ${dialogs.length})`);
check((await count('.note.inert')) > 0, 'untrusted: the page says what it made inert');

// --- The in-browser engine (only when its worker was built: AGENTWORLD_WEB_WORKER=1): on
// WebGPU (SwiftShader), then in a browser without WebGPU, on the CPU fallback.
async function inBrowser(p, expect, shot) {
  await p.goto(base + '/');
  await p.waitForSelector('[data-testid=screen-before] .node', { timeout: 60_000 });
  await p.evaluate(() => document.querySelector('details.system').open = true);
  await p.fill('details.system input[type=number][min="1"]', '6');
  await p.locator('details.system input[type=number][min="1"]').dispatchEvent('change');
  await p.check('[data-testid=in-browser]');
  await p.waitForFunction(
    () => /in this page on|failed/.test(document.querySelector('[data-testid=local-status]')?.textContent ?? ''),
    null, { timeout: STEP_TIMEOUT },
  );
  const status = await p.locator('[data-testid=local-status]').innerText();
  check(status.includes(expect), `in-browser: the model loaded (${status})`);
  check(/f16 weights|f32 weights/.test(status), `in-browser: the page says the weights' precision (${status})`);
  await p.click('[data-testid=run]');
  await p.waitForFunction(
    () => document.querySelector('[data-testid=error]') || (document.querySelector('[data-testid=status]')?.textContent ?? '').includes('1 step'),
    null, { timeout: STEP_TIMEOUT },
  );
  check((await p.locator('[data-testid=error]').count()) === 0, `in-browser (${expect}): a step ran in the page`);
  const streamed = await p.locator('[data-testid=thinking]').innerText();
  check(streamed.length > 0, `in-browser (${expect}): text streamed from the worker (${streamed.slice(0, 60)})`);
  // The MoE heatmap: each generated token lights top_k experts in each of the 4 layers.
  const lit = await p.locator('[data-testid=moe-heatmap] .cell.on').count();
  check(lit > 0 && lit % (4 * 2) === 0, `in-browser (${expect}): the MoE heatmap shows the router's choices (${lit} cells)`);
  check((await p.locator('[data-testid=moe-session] .hrow').count()) === 4, `in-browser (${expect}): this session's expert use is counted per layer`);
  await p.screenshot({ path: join(outDir, shot), fullPage: true });
}
const workerBuilt = (await page.request.get(base + '/worker/agentworld_worker.js')).ok();
if (!workerBuilt) {
  console.log('SKIP in-browser engine: not built (trunk build with AGENTWORLD_WEB_WORKER=1)');
} else {
  await inBrowser(page, 'WebGPU', 'in-browser-webgpu.png');
  const plain = await chromium.launch({ executablePath, headless: true, args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const cpuPage = await plain.newPage({ viewport: { width: 1500, height: 1100 } });
  cpuPage.on('pageerror', (e) => pageErrors.push(String(e)));
  await inBrowser(cpuPage, 'CPU', 'in-browser-cpu.png');
  // A model too big for the device's buffers: refused on WebGPU, loaded on the CPU, and said.
  await page.goto(base + '/?max-buffer-mb=1');
  await page.waitForSelector('[data-testid=screen-before] .node', { timeout: 60_000 });
  await page.check('[data-testid=in-browser]');
  await page.waitForFunction(
    () => /in this page on|failed/.test(document.querySelector('[data-testid=local-status]')?.textContent ?? ''),
    null, { timeout: STEP_TIMEOUT },
  );
  const refused = await page.locator('[data-testid=local-status]').innerText();
  check(/on the CPU: .* needs \d+ MB, this device allows 1 MB per buffer/.test(refused), `in-browser: an oversized tensor is refused on WebGPU (${refused})`);
  await plain.close();
}

// The MoE view's measured expert use: one table per layer, one row per domain of routing.json.
check((await page.locator('[data-testid=moe-domains] .hlayer').count()) === 4, 'teach: expert use by domain, per layer');
check((await page.locator('[data-testid=moe-domains] .hrow').count()) >= 8, 'teach: a row per domain in every layer');
check(pageErrors.length === 0, `no page errors (${pageErrors.slice(0, 3).join(' | ')})`);
await browser.close();
console.log(`screenshots: ${outDir}/{android,web${workerBuilt ? ',in-browser-webgpu,in-browser-cpu' : ''}}.png`);
if (failures) {
  console.error(`${failures} check(s) failed`);
  process.exit(1);
}
console.log('web e2e: all checks passed');
