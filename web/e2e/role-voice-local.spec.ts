import { expect, test } from "./bureau";
import { ConsolePage, text } from "./pages";

/** Issue #25: the role voice offline. `bureau serve` with BUREAU_LLM_LOCAL=1 (what `make run LLM=local` sets)
 * starts the local model helper — llama.cpp's server with SmolLM2-135M in a child process — and points the
 * role voice at it. An English case answers in the role voice; a Chinese case stays in evidence mode (the
 * packaged model is English only), and the console header says so, per case. */

test.use({ bureauEnv: { BUREAU_LLM_LOCAL: "1" } });

test("the local model speaks an English answer in the console; a Chinese case stays in evidence mode and says why", async ({
  page,
  caseFor,
}) => {
  const consolePage = new ConsolePage(page, "en");
  await consolePage.open(await caseFor("safe-combination", "en"));
  await expect(page.getByTestId("mode")).toHaveAttribute("data-mode", "role_voice");
  await expect(page.getByTestId("mode-reason")).toHaveText(text("en", "mode.reason.model_speaks_language"));

  await consolePage.selectRole("informant");
  await consolePage.askPreset("What is the safe combination?");
  await consolePage.expectAnswer("informant", "known");
  // Spoken by the model (no fallback line), stating the cited fact; the X-ray names the responder and the latency.
  await expect(consolePage.answer()).toHaveAttribute("data-responder", "role_voice", { timeout: 30_000 });
  await expect(consolePage.answer().locator(".answer__text")).toContainText("0427");
  await expect(consolePage.answer().locator(".answer__meta")).toHaveCount(0);
  const xray = page.getByTestId("xray");
  await expect(xray).toContainText(text("en", "xray.responder", { responder: text("en", "mode.role_voice") }));

  await consolePage.open(await caseFor("safe-combination", "zh"));
  await expect(page.getByTestId("mode")).toHaveAttribute("data-mode", "evidence");
  await expect(page.getByTestId("mode-reason")).toHaveText(text("en", "mode.reason.language_not_spoken"));
});
