import { useEffect, useState, type FormEvent } from "react";
import { Link, useNavigate } from "react-router";
import { api, ApiError } from "../api/client";
import type { CaseLanguage, ScenarioSummary } from "../api/types";
import { describeError } from "../components/describeError";
import { LanguageSwitch } from "../components/LanguageSwitch";
import { useI18n } from "../i18n/I18n";
import { forgetCase, loadRecentCases, rememberCase, type RecentCase } from "../state/recentCases";

const CASE_LANGUAGES: readonly CaseLanguage[] = ["en", "zh"];

/** Recent cases from localStorage, minus those the server no longer knows (404). */
function useRecentCases(): RecentCase[] {
  const [recent, setRecent] = useState<RecentCase[]>(loadRecentCases);
  useEffect(() => {
    let cancelled = false;
    const stored = loadRecentCases();
    void Promise.all(
      stored.map(async (entry) => {
        try {
          await api.getCase(entry.id);
          return true;
        } catch (error) {
          if (error instanceof ApiError && error.status === 404) {
            forgetCase(entry.id);
            return false;
          }
          return true; // unreachable server or access problem: keep it, it may be fine later
        }
      }),
    ).then((alive) => {
      if (!cancelled) setRecent(stored.filter((_, index) => alive[index]));
    });
    return () => {
      cancelled = true;
    };
  }, []);
  return recent;
}

export function Lobby() {
  const { t, language: uiLanguage } = useI18n();
  const navigate = useNavigate();
  const [scenarios, setScenarios] = useState<ScenarioSummary[] | null>(null);
  // The case language follows the interface language (the browser's, or the switch) until one is picked here.
  const [pickedLanguage, setCaseLanguage] = useState<CaseLanguage | null>(null);
  const caseLanguage = pickedLanguage ?? uiLanguage;
  const [scenarioId, setScenarioId] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const recent = useRecentCases();

  useEffect(() => {
    api.scenarios().then(setScenarios, setError);
  }, []);

  const available = (scenarios ?? []).filter((scenario) => scenario.language === caseLanguage);
  const selectedId = available.some((scenario) => scenario.id === scenarioId) ? scenarioId : (available[0]?.id ?? null);

  async function start(event: FormEvent) {
    event.preventDefault();
    if (selectedId === null) return;
    setStarting(true);
    setError(null);
    try {
      const snapshot = await api.createCase(selectedId, caseLanguage);
      rememberCase({
        id: snapshot.case.id,
        title: snapshot.scenario.title,
        language: snapshot.case.language,
        openedAt: new Date().toISOString(),
      });
      navigate(`/operate/${encodeURIComponent(snapshot.case.id)}`);
    } catch (caught) {
      setError(caught);
      setStarting(false);
    }
  }

  return (
    <div className="lobby">
      <header className="topbar">
        <h1 className="topbar__title">{t("app.title")}</h1>
        <LanguageSwitch />
      </header>
      <main id="main" className="lobby__body">
        <section className="panel" aria-labelledby="lobby-heading">
          <h2 id="lobby-heading">{t("lobby.heading")}</h2>
          <p className="muted">{t("lobby.intro")}</p>
          <form onSubmit={start} className="lobby__form">
            <fieldset className="segmented-field">
              <legend>{t("lobby.caseLanguage")}</legend>
              <div className="segmented">
                {CASE_LANGUAGES.map((option) => (
                  <label key={option} className="segmented__option">
                    <input
                      type="radio"
                      name="case-language"
                      value={option}
                      checked={caseLanguage === option}
                      onChange={() => setCaseLanguage(option)}
                    />
                    <span lang={option === "zh" ? "zh-CN" : "en"}>{t(option === "en" ? "lang.en" : "lang.zh")}</span>
                  </label>
                ))}
              </div>
            </fieldset>
            <fieldset className="scenario-list">
              <legend>{t("lobby.scenario")}</legend>
              {scenarios === null && error === null && <p className="muted">{t("lobby.loading")}</p>}
              {scenarios !== null && available.length === 0 && <p className="muted">{t("lobby.noScenarios")}</p>}
              {available.map((scenario) => (
                <label key={`${scenario.id}-${scenario.language}`} className="scenario-option">
                  <input
                    type="radio"
                    name="scenario"
                    value={scenario.id}
                    checked={selectedId === scenario.id}
                    onChange={() => setScenarioId(scenario.id)}
                  />
                  <span className="scenario-option__text">
                    <span className="scenario-option__title">{scenario.title}</span>
                    <span className="scenario-option__description">{scenario.description}</span>
                    <code className="scenario-option__id">{scenario.id}</code>
                  </span>
                </label>
              ))}
            </fieldset>
            <button type="submit" className="button button--primary button--large" disabled={selectedId === null || starting}>
              {starting ? t("lobby.starting") : t("lobby.start")}
            </button>
            <p role="alert" className="form-error">
              {error !== null && describeError(t, error)}
            </p>
          </form>
        </section>
        <section className="panel" aria-labelledby="recent-heading">
          <h2 id="recent-heading">{t("lobby.recent")}</h2>
          {recent.length === 0 ? (
            <p className="muted">{t("lobby.recentEmpty")}</p>
          ) : (
            <ul className="recent-list">
              {recent.map((entry) => (
                <li key={entry.id} className="recent-list__item">
                  <span>
                    <span className="recent-list__title">{entry.title}</span>{" "}
                    <code>{entry.id}</code> <span className="badge">{entry.language}</span>
                  </span>
                  <span className="recent-list__actions">
                    <Link className="button" to={`/operate/${encodeURIComponent(entry.id)}`}>
                      {t("lobby.openConsole")}
                    </Link>
                    <a className="button" href={`/stage/${encodeURIComponent(entry.id)}`} target="_blank" rel="noreferrer">
                      {t("lobby.openStage")}
                    </a>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </main>
    </div>
  );
}
