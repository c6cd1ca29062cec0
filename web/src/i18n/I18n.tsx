import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type { UiLanguage } from "./strings";
import { isUiLanguage, translate, type Translate } from "./translate";

interface I18nValue {
  language: UiLanguage;
  setLanguage: (language: UiLanguage) => void;
  t: Translate;
}

const STORAGE_KEY = "bureau.uiLanguage";

const I18nContext = createContext<I18nValue | null>(null);

/** The language to start in: the one the operator chose with the switch (remembered), else the first of the
 * browser's languages the interface speaks (`zh-CN`, `zh-TW`, `zh` → 中文; `en-GB` → English), else English. */
export function initialLanguage(stored: string | null, browserLanguages: readonly string[]): UiLanguage {
  if (isUiLanguage(stored)) return stored;
  for (const tag of browserLanguages) {
    const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
    if (isUiLanguage(primary)) return primary;
  }
  return "en";
}

function browserLanguages(): readonly string[] {
  if (typeof navigator === "undefined") return [];
  return navigator.languages?.length ? navigator.languages : navigator.language ? [navigator.language] : [];
}

function storedLanguage(): UiLanguage {
  return initialLanguage(localStorage.getItem(STORAGE_KEY), browserLanguages());
}

function useI18nValue(language: UiLanguage, setLanguage: (language: UiLanguage) => void): I18nValue {
  const t = useCallback<Translate>((key, params) => translate(language, key, params), [language]);
  useEffect(() => {
    document.documentElement.lang = language === "zh" ? "zh-CN" : "en";
  }, [language]);
  return useMemo(() => ({ language, setLanguage, t }), [language, setLanguage, t]);
}

/** The interface language: the operator's choice, remembered in localStorage; until there is one, the
 * browser's language (nothing is stored for that: only the switch remembers). */
export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<UiLanguage>(storedLanguage);
  const setLanguage = useCallback((next: UiLanguage) => {
    localStorage.setItem(STORAGE_KEY, next);
    setLanguageState(next);
  }, []);
  const value = useI18nValue(language, setLanguage);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

const ignoreLanguageChange = () => undefined;

/** A subtree pinned to one language (the stage follows its case's language, not the operator's choice). */
export function FixedLanguage({ language, children }: { language: UiLanguage; children: ReactNode }) {
  const value = useI18nValue(language, ignoreLanguageChange);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18nValue {
  const value = useContext(I18nContext);
  if (value === null) throw new Error("useI18n needs an I18nProvider");
  return value;
}
