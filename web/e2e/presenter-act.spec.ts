import type { APIRequestContext, Locator, Page } from "@playwright/test";
import type { UiLanguage } from "../src/i18n/strings";
import { expectNoViolations } from "./axe";
import { expect, launchBureau, shutDownBureau, test } from "./bureau";
import { ConsolePage, SECRET_CARD, StagePage, screenshot, text, useUiLanguage } from "./pages";

/** The presenter act (docs/presenter-guide.md): the same question asked without the space filter. This file's
 * server has the act on. */
test.use({ bureauEnv: { BUREAU_PRESENTER_ACTS: "1" } });

const COMBINATION: Record<UiLanguage, string> = { en: "What is the safe combination?", zh: "保险柜的密码是多少？" };
const STAGE_LAG_MS = 1_500;
const ACT_PATH = /\/acts\/unfiltered$/;
const ORDINARY_PATH = /\/interrogations$/;

type Space = "detective" | "informant" | "suspect" | "bulletin_board";
interface ApiCard {
  id: string;
  topic: string;
  content: string;
}
interface Answer {
  certainty: string;
  evidence: string[];
  answer: string;
  trace: { unfiltered?: boolean; locked?: { space: Space; score: number }[]; grant?: { keys: Space[] } };
}
interface Snapshot {
  spaces: Record<Space, ApiCard[]>;
  scenario: { topic_labels: Record<string, Partial<Record<UiLanguage, string>>> };
}

/** What the detective must never see: the other roles' cards, by text, id and topic label (in the screen's language). */
async function foreignMarks(request: APIRequestContext, caseId: string, language: UiLanguage): Promise<string[]> {
  const response = await request.get(`/api/cases/${caseId}`);
  expect(response.status()).toBe(200);
  const snapshot = (await response.json()) as Snapshot;
  const foreign = [...snapshot.spaces.informant, ...snapshot.spaces.suspect];
  expect(foreign.length).toBeGreaterThan(0);
  const ownTopics = new Set(snapshot.spaces.detective.map((card) => card.topic));
  const labels = foreign.filter((card) => !ownTopics.has(card.topic)).map((card) => snapshot.scenario.topic_labels[card.topic]?.[language] ?? card.topic);
  return [...foreign.map((card) => card.content), ...foreign.map((card) => card.id), ...labels];
}

/** Everything an element holds as text, hidden parts (a closed table) included. */
async function allText(locator: Locator): Promise<string> {
  return locator.evaluate((element) => element.textContent ?? "");
}

/** The secret's digits, outside ids (a random card or case id can contain "0427" by chance). */
function withoutIds(textContent: string): string {
  return textContent.replace(/[0-9a-f]{10,}/gi, "");
}

function recordPosts(page: Page): string[] {
  const posts: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST") posts.push(new URL(request.url()).pathname);
  });
  return posts;
}

for (const language of ["en", "zh"] as const) {
  test(`the presenter act (${language}): the detective asked without the space filter, the informant's rows locked`, async ({ page, context, caseFor, request }) => {
    const secret = SECRET_CARD[language];
    await useUiLanguage(page, language);
    const caseId = await caseFor("safe-combination", language);
    const posts = recordPosts(page);
    const operator = new ConsolePage(page, language);
    await operator.open(caseId);
    const stage = new StagePage(await context.newPage(), secret);
    await stage.page.setViewportSize({ width: 1920, height: 1080 });
    await stage.open(caseId);

    // The switch is offered (this server has the act on), off until the presenter turns it on.
    await operator.selectRole("detective");
    const toggle = page.getByRole("switch", { name: text(language, "act.toggle") });
    await expect(toggle).not.toBeChecked();
    await toggle.check();
    const detective = text(language, "role.detective");
    await expect(page.getByTestId("act-sentence")).toHaveText(text(language, "act.sentence", { role: detective }));
    await screenshot(page, `console-${language}-presenter-switch-1440x900`);

    const actAnswered = page.waitForResponse((response) => ACT_PATH.test(new URL(response.url()).pathname));
    await operator.askPreset(COMBINATION[language]);
    const act = (await (await actAnswered).json()) as Answer;
    expect(posts.filter((path) => ORDINARY_PATH.test(path))).toEqual([]);

    // The answer is the ordinary route's: the detective cannot open the informant's card.
    await operator.expectAnswer("detective", "unknown");
    await expect(operator.answer()).toContainText(act.answer);
    expect(act.certainty).toBe("unknown");
    expect(act.trace.unfiltered).toBe(true);
    const lockedInformant = (act.trace.locked ?? []).filter((row) => row.space === "informant").length;
    expect(lockedInformant).toBeGreaterThan(0);

    // The X-ray: the act said out loud, the keys of the request, the informant's rows as locks on its lane.
    const xray = page.getByTestId("xray");
    await expect(page.getByTestId("xray-unfiltered")).toContainText(text(language, "xray.unfiltered", { role: detective }));
    const keys = [detective, text(language, "space.bulletin_board")].join(text(language, "list.joiner"));
    await expect(xray.getByTestId("grant-keys")).toHaveText(text(language, "grant.keys", { spaces: keys }));
    const informantLane = page.getByTestId("xray-lane-informant");
    await expect(informantLane).toHaveAttribute("data-locked", String(lockedInformant));
    await expect(informantLane).toContainText(text(language, "space.memoryOf", { role: text(language, "role.informant") }));
    await expect(informantLane).toContainText(text(language, "locked.row"));
    await expect(informantLane).toContainText(text(language, "xray.laneLocked", { n: lockedInformant }));
    await expect(informantLane.locator("[data-card-id]")).toHaveCount(0);
    const locks = informantLane.getByTestId("xray-lock");
    expect(await locks.count()).toBeGreaterThan(0);
    await expect(page.getByTestId("xray-locked-row").filter({ hasText: text(language, "space.memoryOf", { role: text(language, "role.informant") }) })).toHaveCount(lockedInformant);
    await expect(page.getByTestId("xray-legend")).toContainText(text(language, "xray.legend.locked"));

    // The stage: the same rows, a lock each, under the informant's name; nothing else of them.
    const stageLocked = stage.page.getByTestId("stage-locked");
    await expect(stageLocked).toHaveAttribute("data-count", String(act.trace.locked?.length ?? 0), { timeout: STAGE_LAG_MS });
    await expect(stageLocked).toContainText(text(language, "stage.unfiltered", { n: act.trace.locked?.length ?? 0 }));
    await expect(stageLocked).toContainText(text(language, "locked.row"));
    const stageInformant = stage.page.getByTestId("stage-locked-informant");
    await expect(stageInformant).toHaveAttribute("data-count", String(lockedInformant));
    await expect(stageInformant).toContainText(text(language, "role.informant"));
    await expect(stageInformant.locator(".lock-icon")).toHaveCount(lockedInformant);
    await expect(stage.retrieval()).toHaveAttribute("data-outcome", "nothing");

    // No foreign text, card id or topic anywhere on the X-ray or the stage; the secret nowhere on either page.
    const forbidden = await foreignMarks(request, caseId, language);
    const xrayText = await allText(xray);
    const stageText = await allText(stage.page.locator("body"));
    for (const mark of forbidden) {
      expect(xrayText, "the X-ray shows another role's card").not.toContain(mark);
      expect(stageText, "the stage shows another role's card").not.toContain(mark);
    }
    expect(withoutIds(xrayText)).not.toContain("0427");
    expect(withoutIds(stageText)).not.toContain("0427");
    expect(await allText(page.locator("body"))).not.toContain(secret);
    expect(await stage.secretSeen(), "the stage showed the secret").toBe(false);
    const allowed = new Set(["/api/session", `/api/cases/${caseId}/stage`, `/api/cases/${caseId}/stage/events`]);
    expect(stage.apiCalls.filter((path) => !allowed.has(path))).toEqual([]);

    // Both screens of the act meet WCAG 2.1 AA (the switch, the locks, their colours).
    await page.emulateMedia({ reducedMotion: "reduce" });
    await stage.page.emulateMedia({ reducedMotion: "reduce" });
    await expectNoViolations(page, `console with the act (${language})`);
    await expectNoViolations(stage.page, `stage with the act (${language})`);

    if (language === "en") {
      await xray.scrollIntoViewIfNeeded();
      await screenshot(page, "console-en-presenter-act-1440x900", true);
      await screenshot(stage.page, "stage-en-presenter-act-1920x1080", true);
      await page.setViewportSize({ width: 390, height: 844 });
      await xray.scrollIntoViewIfNeeded();
      await screenshot(page, "console-en-presenter-act-390x844");
    }

    // Last (its answer replaces the act's on both screens): the ordinary route answers exactly the same.
    const ordinaryResponse = await request.post(`/api/cases/${caseId}/interrogations`, { data: { role: "detective", question: COMBINATION[language] } });
    expect(ordinaryResponse.status()).toBe(200);
    const ordinary = (await ordinaryResponse.json()) as Answer;
    expect(ordinary.trace.unfiltered).toBeUndefined();
    expect({ certainty: act.certainty, evidence: act.evidence, answer: act.answer }).toEqual({
      certainty: ordinary.certainty,
      evidence: ordinary.evidence,
      answer: ordinary.answer,
    });
  });
}

test("with the switch off, the console asks the ordinary route and shows no locked rows", async ({ page, context, caseFor }) => {
  const caseId = await caseFor("safe-combination", "en");
  const posts = recordPosts(page);
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  const stage = new StagePage(await context.newPage(), SECRET_CARD.en);
  await stage.open(caseId);
  await operator.selectRole("detective");
  const toggle = page.getByRole("switch", { name: text("en", "act.toggle") });
  await expect(toggle).not.toBeChecked();
  // On and off again: the presenter changed their mind.
  await toggle.check();
  await toggle.uncheck();
  await expect(page.getByTestId("act-sentence")).toHaveCount(0);

  const answered = page.waitForResponse((response) => ORDINARY_PATH.test(new URL(response.url()).pathname));
  await operator.askPreset(COMBINATION.en);
  expect(((await (await answered).json()) as Answer).trace.unfiltered).toBeUndefined();
  await operator.expectAnswer("detective", "unknown");
  expect(posts.filter((path) => ACT_PATH.test(path))).toEqual([]);
  await expect(page.getByTestId("xray-unfiltered")).toHaveCount(0);
  await expect(page.getByTestId("xray-lock")).toHaveCount(0);
  const informantLane = page.getByTestId("xray-lane-informant");
  await expect(informantLane).toHaveAttribute("data-searched", "false");
  await expect(informantLane).not.toHaveAttribute("data-locked");
  await expect(page.getByTestId("grant-keys")).toHaveText(text("en", "grant.keys", { spaces: ["Detective", "Bulletin board"].join(text("en", "list.joiner")) }));
  await expect(stage.retrieval()).toHaveAttribute("data-outcome", "nothing", { timeout: STAGE_LAG_MS });
  await expect(stage.page.getByTestId("stage-locked")).toHaveCount(0);
});

test("a server without the act offers no switch, and refuses the route", async ({ page }) => {
  const server = await launchBureau("acts-off");
  try {
    const created = await page.request.post(`${server.baseURL}/api/cases`, { data: { scenario_id: "safe-combination", language: "en" } });
    const caseId = ((await created.json()) as { case: { id: string } }).case.id;
    const health = (await (await page.request.get(`${server.baseURL}/api/health`)).json()) as { presenter_acts: boolean };
    expect(health.presenter_acts).toBe(false);
    const refused = await page.request.post(`${server.baseURL}/api/cases/${caseId}/acts/unfiltered`, { data: { role: "detective", question: COMBINATION.en } });
    expect(refused.status()).toBe(403);
    expect(((await refused.json()) as { detail: { code: string } }).detail.code).toBe("PRESENTER_ACTS_OFF");
    await page.goto(`${server.baseURL}/operate/${caseId}`);
    const operator = new ConsolePage(page, "en");
    await operator.askPreset(COMBINATION.en);
    await operator.expectAnswer("detective", "unknown");
    await expect(page.getByRole("switch")).toHaveCount(0);
  } finally {
    await shutDownBureau(server);
  }
});
