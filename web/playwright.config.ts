import { defineConfig, devices } from "@playwright/test";

/**
 * End-to-end tests against a real `bureau serve` (started by the fixtures in e2e/bureau.ts) serving the
 * built app from web/dist. Chromium comes from Debian (/usr/bin/chromium); Playwright downloads nothing.
 */
export default defineConfig({
  testDir: "./e2e",
  outputDir: "./test-results/artifacts",
  timeout: 120_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"], ["html", { outputFolder: "./test-results/report", open: "never" }]],
  use: {
    ...devices["Desktop Chrome"],
    viewport: { width: 1440, height: 900 },
    // The interface starts in the browser's language: pinned, so no test depends on the machine's locale
    // (e2e/language.spec.ts overrides it to check a Chinese browser).
    locale: "en-US",
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
