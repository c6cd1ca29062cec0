import type { APIRequestContext, Page } from "@playwright/test";
import type { UiLanguage } from "../src/i18n/strings";
import { expectNoViolations } from "./axe";
import { createCase, expect, launchBureau, shutDownBureau, test } from "./bureau";
import { ConsolePage, SECRET_CARD, StagePage, screenshot, text, useUiLanguage } from "./pages";

const COMBINATION: Record<UiLanguage, string> = { en: "What is the safe combination?", zh: "保险柜的密码是多少？" };
const MOLE: Record<UiLanguage, string> = { en: "Who is the mole?", zh: "内鬼是谁？" };

interface ApiCard {
  id: string;
  topic: string;
  content: string;
}
type Spaces = Record<"detective" | "informant" | "suspect" | "bulletin_board", ApiCard[]>;

async function spaces(request: APIRequestContext, caseId: string): Promise<Spaces> {
  const response = await request.get(`/api/cases/${caseId}`);
  expect(response.status()).toBe(200);
  return ((await response.json()) as { spaces: Spaces }).spaces;
}

async function publishByApi(request: APIRequestContext, caseId: string, role: keyof Spaces, cardId: string): Promise<void> {
  const response = await request.post(`/api/cases/${caseId}/publications`, { data: { role, card_id: cardId } });
  expect(response.status()).toBe(201);
}

for (const language of ["en", "zh"] as const) {
  test(`act 1 (${language}): the X-ray draws the informant's space greyed as not searched, with a count and no content`, async ({ page, caseFor, request }) => {
    await useUiLanguage(page, language);
    const caseId = await caseFor("safe-combination", language);
    const operator = new ConsolePage(page, language);
    await operator.open(caseId);
    await operator.selectRole("detective");
    await operator.askPreset(COMBINATION[language]);
    await operator.expectAnswer("detective", "unknown");

    const informantLane = page.getByTestId("xray-lane-informant");
    await expect(informantLane).toHaveAttribute("data-searched", "false");
    const count = (await spaces(request, caseId)).informant.length;
    await expect(informantLane).toContainText(text(language, "xray.notSearched", { role: text(language, "role.informant"), n: count }));
    await expect(informantLane).not.toContainText(SECRET_CARD[language]);
    await expect(informantLane.locator("[data-card-id]")).toHaveCount(0);
    await expect(page.getByTestId("xray-lane-detective")).toHaveAttribute("data-searched", "true");
    await expect(page.getByTestId("xray-lane-bulletin_board")).toHaveAttribute("data-searched", "true");
    await expect(page.getByTestId("xray-lane-detective")).toContainText(text(language, "space.memoryOf", { role: text(language, "role.detective") }));
    if (language === "zh") {
      // No English left in the picture: lane names, legend and verdict all come from the Chinese strings.
      await expect(page.getByTestId("xray")).not.toContainText(/memory|searched|threshold|Bulletin/);
    }
  });
}

test("a candidate just below the threshold is labelled with its exact score", async ({ page, request, bureau }) => {
  // Measure where the detective's best candidate lands, then run a server whose threshold sits 0.004 above it.
  const probeCase = await createCase(request, "safe-combination", "en");
  const probe = await request.post(`/api/cases/${probeCase}/interrogations`, { data: { role: "detective", question: COMBINATION.en } });
  // An explicit BUREAU_RELEVANCE_THRESHOLD is a cosine threshold (docs/retrieval.md): measure the cosine, and
  // turn the uncertain band off so the best candidate is a plain miss just below the line.
  const misses = ((await probe.json()) as { trace: { misses: { cosine: number; reason: string }[] } }).trace.misses;
  const best = Math.max(...misses.filter((miss) => miss.reason === "below_threshold").map((miss) => miss.cosine));
  const threshold = (Math.round(best * 1000) + 4) / 1000;
  const server = await launchBureau("borderline", { BUREAU_RELEVANCE_THRESHOLD: String(threshold), BUREAU_BORDERLINE_BAND: "0" });
  try {
    expect(bureau.baseURL).not.toBe(server.baseURL);
    await page.goto(`${server.baseURL}/`);
    const response = await page.request.post(`${server.baseURL}/api/cases`, { data: { scenario_id: "safe-combination", language: "en" } });
    const caseId = ((await response.json()) as { case: { id: string } }).case.id;
    const operator = new ConsolePage(page, "en");
    await page.goto(`${server.baseURL}/operate/${caseId}`);
    await operator.askPreset(COMBINATION.en);
    await operator.expectAnswer("detective", "unknown");
    // Every candidate in the borderline band is labelled; the best one sits 0.004 under the line.
    const near = page.getByTestId("xray-lane-detective").locator('[data-just-below="true"]');
    await expect(near.filter({ hasText: text("en", "xray.justBelow", { score: best.toFixed(3) }) })).toHaveCount(1);
    await expect(page.getByTestId("xray")).toContainText(text("en", "xray.verdict.bestMiss", { score: best.toFixed(3), threshold: threshold.toFixed(3) }));
  } finally {
    await shutDownBureau(server);
  }
});

test("after five questions the chart shows at most one group of session records", async ({ page, caseFor }) => {
  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  const askButton = page.getByRole("button", { name: text("en", "ask.submit"), exact: true });
  let previous: string | null = null;
  for (let asked = 1; asked <= 5; asked++) {
    await operator.ask(COMBINATION.en);
    // Each question is a new answer (a new key): wait for it before asking the next one.
    await expect(operator.answer()).not.toHaveAttribute("data-answer-key", previous ?? "none");
    previous = await operator.answer().getAttribute("data-answer-key");
    await expect(operator.answer()).toHaveAttribute("data-certainty", "unknown");
    await expect(askButton).toHaveAttribute("aria-disabled", "false");
  }
  const groups = page.getByTestId("xray-context");
  await expect(groups).toHaveCount(1);
  const folded = Number(await groups.getAttribute("data-count"));
  expect(folded).toBeGreaterThan(1); // several session records matched, drawn as one group
  // No session record is drawn as a mark on the score axis, and the legend names only what is drawn.
  await expect(page.locator('[data-testid^="xray-lane-"] [data-kind="derived_context"]')).toHaveCount(0);
  const legend = await page.getByTestId("xray-legend").locator("[data-entry]").evaluateAll((entries) => entries.map((entry) => entry.getAttribute("data-entry")));
  expect(legend).toEqual(["miss", "context", "not_searched"]);
});

test("a reload keeps the selected role, each role's answer and the matrix (unknown included); a second console sees the same", async ({ page, context, caseFor }) => {
  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  await operator.selectRole("detective");
  await operator.askPreset(COMBINATION.en);
  await operator.expectAnswer("detective", "unknown");
  await operator.selectRole("informant");
  await operator.ask(COMBINATION.en);
  await operator.expectAnswer("informant", "known");
  const answerText = (await operator.answer().locator(".answer__text").textContent()) ?? "";
  await expect(operator.matrixCell("detective", "combination")).toHaveAttribute("data-cell", "unknown");

  await page.reload();
  await expect(page.locator(".role-button--informant")).toHaveAttribute("aria-pressed", "true");
  await operator.expectAnswer("informant", "known");
  await expect(operator.answer().locator(".answer__text")).toHaveText(answerText);
  await expect(page.getByTestId("xray")).toContainText(text("en", "xray.verdict.own", { role: "Informant" }));
  await expect(operator.matrixCell("detective", "combination")).toHaveAttribute("data-cell", "unknown");
  await expect(operator.matrixCell("informant", "combination")).toHaveAttribute("data-cell", "own_memory");
  await operator.selectRole("detective");
  await operator.expectAnswer("detective", "unknown");
  await expect(page.getByTestId("xray-verdict")).toHaveAttribute("data-verdict", "nothing_found");

  const second = new ConsolePage(await context.newPage(), "en");
  await second.open(caseId);
  await expect(second.matrixCell("detective", "combination")).toHaveAttribute("data-cell", "unknown");
  await expect(second.matrixCell("informant", "combination")).toHaveAttribute("data-cell", "own_memory");
});

test("mole: with both tips on the board the console, the matrix and the stage all say conflicting", async ({ page, context, caseFor, request }) => {
  const caseId = await caseFor("mole", "en");
  const opening = await spaces(request, caseId);
  for (const role of ["informant", "suspect"] as const) {
    const tip = opening[role].find((card) => card.topic === "mole_identity");
    expect(tip).toBeDefined();
    await publishByApi(request, caseId, role, tip!.id);
  }
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  await expect(page.getByRole("group", { name: text("en", "ask.presets") })).not.toContainText(COMBINATION.en);
  const stage = new StagePage(await context.newPage(), "never-shown");
  await stage.open(caseId);

  await operator.selectRole("detective");
  await operator.askPreset(MOLE.en);
  await operator.expectAnswer("detective", "known");
  await expect(operator.answer()).toHaveAttribute("data-conflicting", "true");
  await expect(page.getByTestId("conflict-badge")).toHaveText(text("en", "answer.conflict"));
  const cites = operator.answer().locator(".cite");
  await expect(cites).toHaveCount(2);
  await expect(cites.filter({ hasText: text("en", "answer.citeTrust", { trust: "high" }) })).toContainText(text("en", "answer.cardSource", { role: "Informant" }));
  await expect(cites.filter({ hasText: text("en", "answer.citeTrust", { trust: "low" }) })).toContainText(text("en", "answer.cardSource", { role: "Suspect" }));
  await expect(operator.matrixCell("detective", "mole")).toHaveAttribute("data-cell", "conflicting");
  await expect(operator.matrixCell("detective", "mole")).toHaveText(text("en", "cell.conflicting"));
  await expect(stage.retrieval()).toHaveAttribute("data-outcome", "conflicting");
  await expect(stage.retrieval()).toContainText(text("en", "stage.outcome.conflicting"));
  await screenshot(page, "console-en-mole-conflict-1440x900", true);
  await screenshot(stage.page, "stage-en-mole-conflict-1920x1080", true);
});

test("publish at 1440×900: the new board copy scrolls into view highlighted, the notice clears on the next action, focus stays put", async ({ page, caseFor, request }) => {
  const caseId = await caseFor("safe-combination", "en");
  // A long board first, so the new copy lands below the fold unless the console brings it into view.
  const opening = await spaces(request, caseId);
  for (const role of ["detective", "suspect"] as const) {
    for (const card of opening[role]) await publishByApi(request, caseId, role, card.id);
  }
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  await operator.selectRole("informant");
  await expect(operator.board().locator(".card")).toHaveCount(opening.detective.length + opening.suspect.length);

  const publish = operator.privateCards().locator(".card", { hasText: SECRET_CARD.en }).getByRole("button", { name: /Publish to board/ });
  await publish.click();
  const copy = operator.board().locator(".card", { hasText: SECRET_CARD.en });
  await expect(copy).toHaveAttribute("data-fresh", "true");
  await expect(copy).toBeInViewport();
  await expect(publish).toBeFocused();
  await expect(page.getByTestId("notice")).toHaveText(text("en", "cards.published"));

  await operator.ask(COMBINATION.en);
  await operator.expectAnswer("informant", "known");
  await expect(page.getByTestId("notice")).toBeEmpty();
  await expect(copy).not.toHaveAttribute("data-fresh", "true");
  await expect(page.getByRole("button", { name: text("en", "ask.submit"), exact: true })).toBeFocused();
});

async function expectNoOverlap(page: Page, selector: string): Promise<void> {
  const boxes = await page.locator(selector).evaluateAll((elements) =>
    elements.map((element) => {
      const rect = element.getBoundingClientRect();
      return { name: element.className, left: rect.left, top: rect.top + window.scrollY, right: rect.right, bottom: rect.bottom + window.scrollY };
    }),
  );
  expect(boxes.length).toBeGreaterThan(2);
  for (const [i, a] of boxes.entries()) {
    expect(a.left, `${a.name} starts off screen`).toBeGreaterThanOrEqual(0);
    for (const b of boxes.slice(i + 1)) {
      const overlap = a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
      expect(overlap, `${a.name} overlaps ${b.name}`).toBe(false);
    }
  }
}

async function expectNoHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

test("at 390 px console and stage stack: no horizontal scroll, no overlapping panels", async ({ page, context, caseFor }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const caseId = await caseFor("safe-combination", "zh");
  await useUiLanguage(page, "zh");
  const operator = new ConsolePage(page, "zh");
  await operator.open(caseId);
  await operator.selectRole("informant");
  await operator.askPreset(COMBINATION.zh);
  await operator.expectAnswer("informant", "known");
  await expectNoHorizontalScroll(page);
  expect(await page.locator(".console__body .panel").count()).toBeGreaterThan(4);
  await expectNoOverlap(page, ".role-rail, .console__body .panel");
  await screenshot(page, "console-zh-390x844", true);

  const stage = new StagePage(await context.newPage(), "never-shown");
  await stage.page.setViewportSize({ width: 390, height: 844 });
  await stage.open(caseId);
  await expect(stage.retrieval()).toHaveAttribute("data-outcome", "own_memory");
  await expectNoHorizontalScroll(stage.page);
  await expectNoOverlap(stage.page, ".stage-tile, .stage-retrieval, .stage-board");
  await screenshot(stage.page, "stage-zh-390x844", true);
});

test("the stage at /stage/latest follows the operator to a new case", async ({ page, caseFor }) => {
  const first = await caseFor("safe-combination", "en");
  await page.goto("/stage/latest");
  await expect(page.getByTestId("stage-case")).toHaveAttribute("data-case-id", first);
  const second = await caseFor("mole", "en");
  await expect(page.getByTestId("stage-case")).toHaveAttribute("data-case-id", second, { timeout: 15_000 });
});

test("the Chinese console with a conflict passes axe WCAG 2.1 AA", async ({ page, caseFor, request }) => {
  await page.emulateMedia({ reducedMotion: "reduce" });
  await useUiLanguage(page, "zh");
  const caseId = await caseFor("mole", "zh");
  const opening = await spaces(request, caseId);
  for (const role of ["informant", "suspect"] as const) await publishByApi(request, caseId, role, opening[role].find((card) => card.topic === "mole_identity")!.id);
  const operator = new ConsolePage(page, "zh");
  await operator.open(caseId);
  await operator.askPreset(MOLE.zh);
  await expect(operator.answer()).toHaveAttribute("data-conflicting", "true");
  await expect(operator.matrixCell("detective", "mole")).toHaveText(text("zh", "cell.conflicting"));
  await expectNoViolations(page, "console (zh, conflict)");
});
